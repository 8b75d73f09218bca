// A fault-injecting HTTP proxy between the function and moto_server: it forwards
// DynamoDB requests unchanged until told to answer some of them with a DynamoDB
// error instead (the only fake in the Lambda tests; moto serves everything else).
import http from "node:http";

const ERROR_PREFIX = "com.amazonaws.dynamodb.v20120810#";

function dynamoError(type, message, extra = {}) {
  return { status: 400, type, body: { __type: `${ERROR_PREFIX}${type}`, message, ...extra } };
}

const throttling = () => dynamoError("ThrottlingException", "Rate of requests exceeds the allowed throughput.");

/** A cancelled transaction whose first item failed its condition, as DynamoDB reports it. */
function conditionCancelled(body) {
  const items = JSON.parse(body.toString("utf8")).TransactItems ?? [];
  const reasons = items.map((_, i) => (i === 0 ? { Code: "ConditionalCheckFailed", Message: "The conditional request failed" } : { Code: "None" }));
  return dynamoError(
    "TransactionCanceledException",
    `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(", ")}]`,
    { CancellationReasons: reasons },
  );
}

/**
 * Starts the proxy on a free loopback port in front of `target` (moto's endpoint).
 * Resolves to {endpoint, faulted (count of injected errors), ops (operations seen),
 * throttleAll(), throttleNextTransaction(), cancelTransactions(), cancelNextTransaction(),
 * heal(), close()}.
 */
export async function startFaultProxy(target) {
  const upstream = new URL(target);
  // rule(op, body, token) -> an error to answer with, or null to forward.
  let rule = () => null;
  const proxy = { faulted: 0, ops: [] };

  // One transaction (the first TransactWriteItems from now on) and the SDK's retries of it,
  // which resend its ClientRequestToken; everything else passes.
  const oneTransaction = (error) => {
    let victim = null;
    return (op, body, token) => {
      if (op !== "TransactWriteItems") return null;
      victim ??= token;
      return token === victim ? error(body) : null;
    };
  };

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const op = String(req.headers["x-amz-target"] ?? "").split(".").pop();
      proxy.ops.push(op);
      let token = null;
      try {
        token = JSON.parse(body.toString("utf8")).ClientRequestToken ?? null;
      } catch {}
      const fault = rule(op, body, token);
      if (fault) {
        proxy.faulted += 1;
        const text = JSON.stringify(fault.body);
        res.writeHead(fault.status, {
          "content-type": "application/x-amz-json-1.0",
          "x-amzn-errortype": `${fault.type}:`,
          "x-amzn-requestid": `fault-${proxy.faulted}`,
          "content-length": Buffer.byteLength(text),
        });
        res.end(text);
        return;
      }
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(proxy, {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    throttleAll() {
      rule = () => throttling();
    },
    throttleNextTransaction() {
      rule = oneTransaction(throttling);
    },
    cancelTransactions() {
      rule = (op, body) => (op === "TransactWriteItems" ? conditionCancelled(body) : null);
    },
    cancelNextTransaction() {
      rule = oneTransaction(conditionCancelled);
    },
    heal() {
      rule = () => null;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  });
}
