/** `ordergate ofs import`: register or update OFS issues from a JSON array (product.md's import format). */
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { formatPrice, type OfsIssue } from '../domain/ofs-issue.js';
import { AdminError, parseOfsIssues } from '../services/admin.js';
import { CliError, isoInstant, withWorkspace, type CliIo } from './context.js';

/** One line per issue: `<registered|updated>: EXCHANGE TOKEN SYMBOL SERIES name=value ...`. */
export function describeOfsIssue(issue: OfsIssue): string {
  return [
    issue.exchange,
    issue.scripToken,
    issue.symbol,
    issue.series,
    `floor=${formatPrice(issue.floorPricePaise)}`,
    `tick=${formatPrice(issue.tickSizePaise)}`,
    `retail_cutoff=${issue.retailCutoffPricePaise === null ? 'none' : formatPrice(issue.retailCutoffPricePaise)}`,
    `offer_quantity=${issue.offerQuantity}`,
    `allocation=${issue.allocation}`,
    `non_retail=${isoInstant(issue.nonRetailOpensAt)}/${isoInstant(issue.nonRetailClosesAt)}`,
    `retail=${isoInstant(issue.retailOpensAt)}/${isoInstant(issue.retailClosesAt)}`,
    `settlement=${issue.settlementDelayMs === null ? 'T+1' : `${issue.settlementDelayMs / 1000}s`}`,
  ].join(' ');
}

async function readImportFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
}

export function ofsCommand(io: CliIo): Command {
  const ofs = new Command('ofs').description('manage the registry of OFS issues');
  ofs
    .command('import')
    .description('register or update OFS issues from a JSON array; an issue with the same exchange and scrip_token is updated; all or nothing')
    .argument('<file.json>')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout one line per issue, in file order:',
        '  <registered|updated>: <exchange> <scrip_token> <symbol> <series> floor=<rupees> tick=<rupees>',
        '    retail_cutoff=<rupees|none> offer_quantity=<n> allocation=<method>',
        '    non_retail=<opens_at>/<closes_at> retail=<opens_at>/<closes_at> settlement=<T+1|<seconds>s>',
      ].join('\n'),
    )
    .action(async (file: string) => {
      const json = await readImportFile(file);
      // Check the whole file before touching the database: a bad file writes nothing.
      let issues: OfsIssue[];
      try {
        issues = parseOfsIssues(json);
      } catch (error) {
        if (error instanceof AdminError) throw new CliError(`${file}: ${error.message}`);
        throw error;
      }
      await withWorkspace(io, async ({ admin, issues: registry }) => {
        const known = new Set<string>();
        for (const issue of issues) {
          if (await registry.find(issue.exchange, issue.scripToken)) known.add(`${issue.exchange}:${issue.scripToken}`);
        }
        await admin.importOfsIssues(json);
        for (const issue of issues) {
          const key = `${issue.exchange}:${issue.scripToken}`;
          io.stdout.write(`${known.has(key) ? 'updated' : 'registered'}: ${describeOfsIssue(issue)}\n`);
          // A second entry for the same instrument in one file updates the first.
          known.add(key);
        }
      });
    });
  return ofs;
}
