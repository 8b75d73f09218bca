// A small remote A2A agent on the official @a2a-js/sdk (v1.0 JSON-RPC over
// node:http, no Express): a "fraud review" agent with push notifications.
//
// * startFraudAgent({pushSender}) → {url, requests, sender, complete(taskId, {verdict, delayMs}), close()};
//   pushSender(store) builds the push sender (default: the SDK's DefaultPushNotificationSender).
// * Every JSON-RPC request is recorded in `requests` ({method, headers, body}).
// * execute() publishes the task (SUBMITTED) and WORKING, then waits until the
//   test calls complete(taskId) (deterministic, no timing races), waits a
//   short delay, and publishes an artifact and COMPLETED. The SDK's
//   DefaultPushNotificationSender POSTs each event to the webhook the client
//   registered with SendMessage's taskPushNotificationConfig.

import http from "node:http";
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { TaskState } from "@a2a-js/sdk";
import {
  AgentEvent,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  defaultServerCallContextBuilder,
  validateVersion,
} from "@a2a-js/sdk/server";

const text = (value) => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "text/plain" });
const status = (state, message) => ({ state, message, timestamp: new Date().toISOString() });

class FraudReviewExecutor {
  constructor() {
    this.gates = new Map(); // taskId -> {promise, resolve}
  }
  gate(taskId) {
    let g = this.gates.get(taskId);
    if (!g) {
      let resolve;
      const promise = new Promise((r) => (resolve = r));
      g = { promise, resolve };
      this.gates.set(taskId, g);
    }
    return g;
  }
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED, undefined),
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      }),
    );
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING, undefined), metadata: undefined }));
    const { verdict, delayMs } = await this.gate(taskId).promise;
    await sleep(delayMs);
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: "fraud-verdict",
          name: "verdict",
          description: "fraud review verdict",
          parts: [text(verdict)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED, undefined), metadata: undefined }));
    bus.finished();
  }
  async cancelTask(taskId, bus) {
    bus.finished();
  }
}

function agentCard(base) {
  return {
    name: "fraud-review",
    description: "Reviews refunds for fraud (test agent).",
    supportedInterfaces: [{ url: `${base}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
    provider: undefined,
    version: "1.0.0",
    capabilities: { streaming: false, pushNotifications: true, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text"],
    defaultOutputModes: ["text"],
    skills: [
      {
        id: "fraud-review",
        name: "Fraud review",
        description: "Checks an order refund for fraud signals.",
        tags: ["fraud"],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString("utf8");
}

const defaultSender = (store) => new DefaultPushNotificationSender(store, { timeout: 5_000 });

export async function startFraudAgent({ pushSender = defaultSender } = {}) {
  const executor = new FraudReviewExecutor();
  const requests = [];
  let card;
  const pushStore = new InMemoryPushNotificationStore();
  let handler;
  let transport;
  const server = http.createServer(async (req, res) => {
    try {
      if (req.method === "GET" && req.url === "/.well-known/agent-card.json") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(card));
        return;
      }
      if (req.method === "POST" && req.url === "/a2a/jsonrpc") {
        const raw = await readBody(req);
        const body = JSON.parse(raw);
        requests.push({ method: body.method, headers: req.headers, body });
        const context = defaultServerCallContextBuilder({
          user: new UnauthenticatedUser(),
          headers: req.headers,
          requestedVersion: req.headers["a2a-version"] || undefined,
        });
        let answer;
        try {
          validateVersion(context.requestedVersion, card, "JSONRPC");
          answer = await transport.handle(body, context);
        } catch (err) {
          answer = { jsonrpc: "2.0", id: body.id ?? null, error: JsonRpcTransportHandler.mapToJSONRPCError(err) };
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(answer));
        return;
      }
      res.writeHead(404).end();
    } catch (err) {
      res.writeHead(500, { "content-type": "text/plain" }).end(String(err?.stack ?? err));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  card = agentCard(url);
  const sender = pushSender(pushStore);
  handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor, undefined, pushStore, sender);
  transport = new JsonRpcTransportHandler(handler);
  return {
    url,
    requests,
    sender,
    /** Lets task `taskId` finish with `verdict` after `delayMs`. */
    complete(taskId, { verdict = "No fraud signals: approve.", delayMs = 100 } = {}) {
      executor.gate(taskId).resolve({ verdict, delayMs });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
    id: randomUUID(),
  };
}
