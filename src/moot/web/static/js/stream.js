// Following a debate's events over Server-Sent Events, read with fetch so the token can go in a header
// and reconnection is ours: after a network drop it asks for the events after the last seq it has
// (Last-Event-ID), so the server replays what was missed, with no gap and no repeat.

import { authHeaders, errorOf } from "./api.js";

/** Events after which the server ends the stream: this run is over. */
export const RUN_ENDS = new Set([
  "debate_completed",
  "debate_failed",
  "debate_interrupted",
  "debate_paused",
]);

/**
 * follow(id, {after, onEvent, onStatus}) -> {close()}
 * onEvent(event) gets each event once: durable events in seq order (a repeat is dropped by seq) and the
 * live token deltas. onStatus("live" | "reconnecting" | "idle" | "ended" | "error", detail) tells the connection
 * ("idle": the server ended the stream with no run going on; it is asked again, less and less often).
 */
export function follow(debateId, { after = 0, onEvent, onStatus = () => {} }) {
  let last = after;
  let closed = false;
  let controller = null;
  let delay = 500;

  async function connect() {
    while (!closed) {
      controller = new AbortController();
      let ended = false;
      try {
        const path = `/api/debates/${encodeURIComponent(debateId)}/events`;
        const response = await fetch(path, {
          headers: { ...authHeaders(path), Accept: "text/event-stream", "Last-Event-ID": String(last) },
          signal: controller.signal,
          cache: "no-store",
        });
        if (!response.ok) {
          const err = await errorOf(response);
          onStatus("error", err);
          return; // 404, 401: retrying will not help
        }
        onStatus("live");
        let heard = false;
        let dropped = false;
        for await (const message of messages(response.body)) {
          if (message.event === "disconnected") {
            dropped = true; // the server dropped us (too slow): reconnect
            break;
          }
          if (!message.data) continue;
          const event = JSON.parse(message.data);
          if (event.seq != null) {
            if (event.seq <= last) continue;
            last = event.seq;
          }
          if (!heard) delay = 500;
          heard = true;
          onEvent(event);
          if (RUN_ENDS.has(event.type)) ended = true;
        }
        if (!ended && !dropped && !closed) {
          // The server closed the stream with no run's end: nothing runs this debate now (created and not
          // started, say). Asked again later, less and less often; a run started meanwhile is then followed.
          onStatus("idle");
          await new Promise((resolve) => setTimeout(resolve, delay));
          delay = Math.min(delay * 2, 8000);
          continue;
        }
      } catch (err) {
        if (closed) return;
        onStatus("reconnecting", err);
      }
      if (ended) {
        onStatus("ended");
        return;
      }
      if (closed) return;
      onStatus("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 8000);
    }
  }

  connect();
  return {
    close() {
      closed = true;
      controller?.abort();
    },
  };
}

/** The SSE messages in a byte stream: {event, data, id}. */
async function* messages(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      const message = { event: "message", data: "", id: null };
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") data.push(val);
        else if (field === "event") message.event = val;
        else if (field === "id") message.id = val;
      }
      message.data = data.join("\n");
      yield message;
    }
  }
}
