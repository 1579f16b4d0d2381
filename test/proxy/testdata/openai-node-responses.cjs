// openai-node-responses.cjs calls each base URL given on the command line
// through the Responses API of the OpenAI SDK for Node (from
// $HERMES_OPENAI_NODE_DIR), plain and streamed, as an application would,
// and prints what it got as one JSON object: each reply's text and status.
const path = require("node:path");
const { OpenAI } = require(path.join(process.env.HERMES_OPENAI_NODE_DIR, "node_modules", "openai"));

(async () => {
  const out = {};
  for (const baseURL of process.argv.slice(2)) {
    const client = new OpenAI({ baseURL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0, timeout: 20000 });
    const params = { model: "fault-model", input: "Say hello.", max_output_tokens: 1024 };
    const plain = await client.responses.create(params);
    const stream = await client.responses.create({ ...params, stream: true });
    let text = "";
    let events = 0;
    let status = "";
    for await (const event of stream) {
      events++;
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed" || event.type === "response.incomplete") status = event.response.status;
    }
    out[baseURL] = { plain: plain.output_text, plainEnd: plain.status, stream: text, streamEnd: status, events };
  }
  console.log(JSON.stringify(out));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
