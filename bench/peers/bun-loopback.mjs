// Preloaded into Bun for the Terrence peer (`bun --preload`, bench/peers.mjs): every Bun.serve listens on 127.0.0.1
// only, whatever host the application asks for (Terrence's API server has no listen-address setting).
const serve = Bun.serve;
Bun.serve = (options, ...rest) => serve.call(Bun, { ...options, hostname: "127.0.0.1" }, ...rest);
