import { timingSafeEqual } from "node:crypto";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { NextFunction, Request, Response, Router } from "express";
import type { Config } from "../config.js";
import type { Queues } from "../queues.js";

const safeEqual = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/** HTTP basic auth with the operator credentials; without them configured, nobody gets in. */
export function operatorAuth(config: Config) {
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization ?? "";
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
    if (match?.[1] && config.ADMIN_USER && config.ADMIN_PASSWORD) {
      const decoded = Buffer.from(match[1], "base64").toString("utf8");
      const sep = decoded.indexOf(":");
      if (sep > 0 && safeEqual(decoded.slice(0, sep), config.ADMIN_USER) && safeEqual(decoded.slice(sep + 1), config.ADMIN_PASSWORD)) {
        next();
        return;
      }
    }
    res.set("WWW-Authenticate", 'Basic realm="research-evidence operators", charset="UTF-8"');
    res.status(401).json({
      detail: config.ADMIN_USER ? "Operator credentials are required." : "Operator access is disabled: set ADMIN_USER and ADMIN_PASSWORD.",
      code: "unauthorized",
    });
  };
}

export function queueBoard(queues: Queues, basePath: string): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(basePath);
  createBullBoard({ queues: queues.all().map((q) => new BullMQAdapter(q)), serverAdapter });
  return serverAdapter.getRouter() as Router;
}
