// Checks an answer against its interrupt's responseSchema on Workers, with Cloudflare's
// validator (bundled by worker-build's esbuild from the Worker's node_modules) instead of
// the jsonschema crate compiled to wasm. Returns null when valid, else the most specific
// violation ("#/path: message"); throws on JSON it cannot parse.
import { Validator } from "@cfworker/json-schema";

export function validate_json(schemaJson, valueJson) {
  // shortCircuit: stop at the first failing keyword; its chain ends with the specific error.
  const result = new Validator(JSON.parse(schemaJson), "2020-12", true).validate(JSON.parse(valueJson));
  if (result.valid) return null;
  const error = result.errors[result.errors.length - 1];
  return `${error.instanceLocation}: ${error.error}`;
}
