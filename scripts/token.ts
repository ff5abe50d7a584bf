import { SignJWT } from "jose";
import { MAX_LOCAL_TOKEN_TTL_SECONDS } from "../src/platform/auth.js";
import { configOrExit } from "../src/platform/config.js";

/** `npm run token -- <sub> [ttl-seconds]`: mints a local HS256 bearer for AUTH_JWT_SECRET. */
const usage = `usage: npm run token -- <sub> [ttl-seconds: a whole number from 1 to ${MAX_LOCAL_TOKEN_TTL_SECONDS}, default 3600]`;
const argv = process.argv.slice(2);
if (argv.some((a) => a === "--help" || a === "-h" || a === "help")) {
  console.log(usage);
  process.exit(0);
}
const unknown = argv.find((a) => /^-[^\d]/.test(a));
if (unknown !== undefined || argv.length > 2) {
  console.error(`${unknown !== undefined ? `unknown option '${unknown}'` : "too many arguments"}: ${usage}`);
  process.exit(2);
}
const [sub, ttlArg] = argv;
if (!sub) {
  console.error(usage);
  process.exit(2);
}
if (ttlArg !== undefined && !/^\d+$/.test(ttlArg)) {
  console.error(`invalid ttl '${ttlArg}': ${usage}`);
  process.exit(2);
}
const ttl = Number(ttlArg ?? 3600);
if (ttl < 1 || ttl > MAX_LOCAL_TOKEN_TTL_SECONDS) {
  console.error(`ttl ${ttl} is out of range: ${usage}`);
  process.exit(2);
}
const config = configOrExit("token", process.env, "text");
if (!config.AUTH_JWT_SECRET) {
  console.error("AUTH_JWT_SECRET is not set: local tokens are signed with it.");
  process.exit(2);
}
let jwt = new SignJWT({}).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setSubject(sub).setIssuedAt().setExpirationTime(`${ttl}s`);
if (config.AUTH_ISSUER) jwt = jwt.setIssuer(config.AUTH_ISSUER);
if (config.AUTH_AUDIENCE) jwt = jwt.setAudience(config.AUTH_AUDIENCE);
console.log(await jwt.sign(new TextEncoder().encode(config.AUTH_JWT_SECRET)));
