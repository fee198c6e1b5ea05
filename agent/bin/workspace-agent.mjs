#!/usr/bin/env node
// The `workspace-agent` command: the TypeScript agent run through tsx's loader (Node 20 cannot run .ts itself).
import { register } from "tsx/esm/api";

register();
await import("../main.ts");
