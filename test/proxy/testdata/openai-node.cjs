// openai-node.cjs calls each base URL given on the command line with the
// OpenAI SDK for Node (from $HERMES_OPENAI_NODE_DIR), plain and streamed,
// as an application would, and prints what it got as one JSON object.
const path = require("node:path");
const { OpenAI } = require(path.join(process.env.HERMES_OPENAI_NODE_DIR, "node_modules", "openai"));

(async () => {
  const out = {};
  for (const baseURL of process.argv.slice(2)) {
    const client = new OpenAI({ baseURL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0, timeout: 20000 });
    const params = { model: "fault-model", messages: [{ role: "user", content: "Say hello." }] };
    const { data, response } = await client.chat.completions.create(params).withResponse();
    const stream = await client.chat.completions.create({ ...params, stream: true });
    let text = "";
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta?.content ?? "";
    }
    out[baseURL] = {
      plain: data.choices[0].message.content,
      encoding: response.headers.get("content-encoding") ?? "",
      stream: text,
      chunks,
    };
  }
  console.log(JSON.stringify(out));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
