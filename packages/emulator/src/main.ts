#!/usr/bin/env node
// The `token-rotator-emulator` bin: checks the Node first, then loads the program.
import { runsOnThisNode } from './supported-node.js';

if (runsOnThisNode('token-rotator-emulator')) await import('./start.js');
