#!/usr/bin/env node
// Thin launcher for the compiled CLI (npm install builds dist/).
import '../dist/src/cli/main.js';
