#!/usr/bin/env node
// The `token-rotator` bin. On a Node too old for the program it must still run far enough to say so
// (one line, exit 2), so it loads the program (./start.js) only after the check. Static imports are
// loaded before any line of a module runs: this file's only one is the check, which imports nothing.
import { runsOnThisNode } from '../supported-node.js';

if (runsOnThisNode('token-rotator')) await import('./start.js');
