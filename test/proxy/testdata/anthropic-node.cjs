// anthropic-node.cjs calls each base URL given on the command line with
// Anthropic's SDK for Node (from $HERMES_ANTHROPIC_NODE_DIR), plain and
// streamed, as an application would, and prints what it got as one JSON
// object: each reply's text and stop_reason.
const path = require("node:path");
const sdk = require(path.join(process.env.HERMES_ANTHROPIC_NODE_DIR, "node_modules", "@anthropic-ai", "sdk"));
const Anthropic = sdk.Anthropic ?? sdk.default ?? sdk;

const text = (message) => message.content.filter((b) => b.type === "text").map((b) => b.text).join("");

(async () => {
  const out = {};
  for (const baseURL of process.argv.slice(2)) {
    const client = new Anthropic({ baseURL, apiKey: process.env.ANTHROPIC_API_KEY, maxRetries: 0, timeout: 20000 });
    const params = { model: "fault-model", max_tokens: 1024, messages: [{ role: "user", content: "Say hello." }] };
    const plain = await client.messages.create(params);
    const stream = client.messages.stream(params);
    let events = 0;
    for await (const _ of stream) {
      events++;
    }
    const streamed = await stream.finalMessage();
    out[baseURL] = {
      plain: text(plain),
      plainEnd: plain.stop_reason,
      stream: text(streamed),
      streamEnd: streamed.stop_reason,
      events,
    };
  }
  console.log(JSON.stringify(out));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
