// Keyboard and button wiring of the static page: composer, header, connection panel.
export function wireControls(ui, actions) {
  ui.composer.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = ui.message.value.trim();
    if (text && !ui.send.disabled) actions.send(text);
  });

  // Enter sends, Shift+Enter is a newline (and IME composition is left alone).
  ui.message.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && !e.altKey && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      if (!ui.send.disabled) ui.composer.requestSubmit();
    }
  });

  document.getElementById("error-dismiss").addEventListener("click", () => {
    actions.dismiss();
    ui.message.focus();
  });

  document.getElementById("new-thread").addEventListener("click", () => {
    actions.newThread();
    ui.message.focus();
  });

  document.getElementById("connection-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const problem = actions.saveConnection(ui.endpoint.value, ui.token.value);
    if (problem) {
      ui.note.textContent = problem;
      ui.endpoint.setAttribute("aria-invalid", "true");
      ui.endpoint.focus();
      return;
    }
    ui.endpoint.removeAttribute("aria-invalid");
    ui.note.textContent = "Saved.";
  });

  ui.endpoint.addEventListener("input", () => {
    ui.note.textContent = "";
  });

  window.addEventListener("popstate", () => actions.urlChanged());
}
