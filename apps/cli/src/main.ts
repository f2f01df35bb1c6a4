#!/usr/bin/env node
import { CommanderError } from 'commander';
import { EXIT } from './exit-codes.js';
import { buildProgram } from './program.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  // Commander has printed what was wrong with the command line (or the help asked for).
  if (!(error instanceof CommanderError)) throw error;
  process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
}
