/**
 * Where a process's exchange links report their health (docs/exchanges.md, "Operating a link"): the health
 * endpoints and the metrics read it when asked. It answers no links until the process opens them, and none
 * in a process that runs no OMS worker (OMS_EMBEDDED=false) or runs the simulator in process.
 */
import type { LinkHealth } from '../exchange.js';

export class LinkHealthBoard {
  private source: () => readonly LinkHealth[] = () => [];

  /** The links' own report, read at each call of current(). */
  watch(source: () => readonly LinkHealth[]): void {
    this.source = source;
  }

  current(): readonly LinkHealth[] {
    return this.source();
  }
}
