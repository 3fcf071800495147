// HTTP hello world on Node's http module. Usage: node http_hello.js HOST:PORT
const http = require("http");
const [host, port] = process.argv[2].split(":");
http.createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
    res.end("Hello, World!");
}).listen(+port, host);
