"""A second A2A peer (issue 51): the official Python `a2a-sdk` client against a Handoff agent.

Usage: a2a_peer.py AGENT_URL ORDER_ID [API_KEY]

Resolves the agent card, then over the card's JSON-RPC interface:
1. sends "Refund order ORDER_ID" (not streamed): the task waits for an answer
   (input-required), its status message carrying the interrupt as a data part;
2. answers it on the same task with {"interruptId", "payload": {"approved": true}};
3. sends "hello" streamed and records each event of the stream.

Prints one JSON object with what it saw (states by their enum names); the Node test
(tests/node/a2a-python-peer.test.mjs) checks it. Exits 1 with the error on stderr when a
call fails. Installed by `make python-peer` into target/python-peer/venv
(tests/python/requirements.txt pins the SDK).
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState
from google.protobuf.json_format import MessageToDict


def message(parts, task_id=""):
    return Message(message_id=f"py-{uuid.uuid4()}", role=Role.ROLE_USER, parts=parts, task_id=task_id)


def state_name(state):
    return TaskState.Name(state)


def task_summary(task):
    """The task's id, context, state, status message parts and artifact text."""
    parts = [MessageToDict(p) for p in task.status.message.parts]
    text = "".join(p.text for a in task.artifacts for p in a.parts if p.text)
    return {
        "id": task.id,
        "contextId": task.context_id,
        "state": state_name(task.status.state),
        "statusParts": parts,
        "artifactText": text,
    }


async def only_task(client, request):
    """The one response of a non-streamed send: a task."""
    responses = [r async for r in client.send_message(request)]
    assert len(responses) == 1 and responses[0].HasField("task"), responses
    return responses[0].task


async def main(url, order_id, api_key):
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        plain = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
        streamed = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        asked = await only_task(
            plain, SendMessageRequest(message=message([Part(text=f"Refund order {order_id}")]))
        )
        first = task_summary(asked)
        data = next((p["data"] for p in first["statusParts"] if "data" in p), {})
        answer = Part()
        answer.data.struct_value.update({"interruptId": data.get("interruptId", ""), "payload": {"approved": True}})
        done = await only_task(plain, SendMessageRequest(message=message([answer], task_id=asked.id)))

        events = []
        async for event in streamed.send_message(SendMessageRequest(message=message([Part(text="hello")]))):
            kind = event.WhichOneof("payload")
            if kind == "status_update":
                events.append({"kind": kind, "state": state_name(event.status_update.status.state)})
            elif kind == "artifact_update":
                text = "".join(p.text for p in event.artifact_update.artifact.parts)
                events.append({"kind": kind, "text": text})
            else:
                events.append({"kind": kind})
        await plain.close()
        await streamed.close()
    print(
        json.dumps(
            {
                "card": {"name": card.name, "interfaces": [MessageToDict(i) for i in card.supported_interfaces]},
                "asked": first,
                "interrupt": data,
                "answered": task_summary(done),
                "stream": events,
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    try:
        asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""))
    except Exception as err:  # noqa: BLE001 - reported to the test, which fails on it
        print(f"a2a_peer: {type(err).__name__}: {err}", file=sys.stderr)
        sys.exit(1)
