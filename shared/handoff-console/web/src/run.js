// The AG-UI subscriber of a run: renders what streams in and records how the run ended.
/** `track` collects: started, finished, runError, failure, interrupts. */
export function subscriber(track, { conversation, statePanel, showError }) {
  return {
    onRunStartedEvent() {
      track.started = true;
    },
    onMessagesChanged({ messages }) {
      conversation.render(messages);
    },
    onStateChanged({ state }) {
      statePanel.set(state);
    },
    onStepStartedEvent({ event }) {
      conversation.stepStarted(String(event.stepName ?? "step"));
    },
    onStepFinishedEvent({ event }) {
      conversation.stepFinished(String(event.stepName ?? "step"));
    },
    onRunErrorEvent({ event }) {
      track.runError = true;
      const code = event.code ? String(event.code) : "";
      const message = String(event.message ?? "the run failed");
      conversation.runError(code, message);
      showError(code ? `${code}: ${message}` : message);
    },
    onRunFailed({ error }) {
      // Handled here (banner, card error): stop the client from logging it as unhandled.
      track.failure = error;
      return { stopPropagation: true };
    },
    onRunFinishedEvent({ outcome, interrupts }) {
      track.finished = true;
      track.interrupts = outcome === "interrupt" && Array.isArray(interrupts) ? interrupts : [];
    },
  };
}
