/**
 * The order test files start in: the long ones first (they run real processes, a browser or a fuzz
 * campaign), so that no long file starts last and keeps the run going alone; within each group vitest's own
 * order (the longest of the last run first when it has run before, else the largest file).
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LONG_FIRST = [
  /^test\/deploy\//,
  /^test\/cli\//,
  /^test\/e2e\//,
  /^test\/fuzz\//,
  /^packages\/client\/test\//,
  /^test\/faults\//,
];

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => {
      const path = relative(root, spec.moduleId);
      const index = LONG_FIRST.findIndex((pattern) => pattern.test(path));
      return index === -1 ? LONG_FIRST.length : index;
    };
    // Array.prototype.sort is stable: vitest's order holds within a group.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
