/**
 * `ordergate users add|revoke-sessions|disable|enable|reset-password|set-operator|set-category|set-member|import-clients|totp|second-factor|zero-margin-limit|totp-unlock|totp-log`:
 * create a user with a generated (or given) password, optionally enrolled in TOTP or an operator; end a
 * user's sessions; shut a user out and let them back in; set a new password; make a user an operator or
 * not; set a user's OFS category and margin type; record the member data a bid needs at the exchange (UCC,
 * PAN, client type, custodian code), one user or a CSV file of clients at once; enrol a user in TOTP; exempt a user from the second factor
 * at login (LOGIN_SECOND_FACTOR_REQUIRED) or not; unlock a user's second factor locked after wrong TOTP codes,
 * and read its locks and unlocks. Passwords are read from stdin or generated, never taken
 * from the command line (where `ps` and the shell history would show them).
 */
import { randomBytes } from 'node:crypto';
import { Argument, Command, Option } from 'commander';
import { totpUri } from '../auth/credentials.js';
import {
  MARGIN_TYPES,
  USER_CATEGORIES,
  userCategoryOf,
  ZERO_MARGIN_CATEGORIES,
  type MarginType,
} from '../domain/ofs/offer/offer.js';
import { formatPrice } from '../domain/ofs/issue/issue.js';
import { CLIENT_TYPES, type MemberData } from '../domain/access/member-data.js';
import { displayToken, withUnsafeEscaped } from '../domain/ofs/display-text.js';
import { CliError, isoInstant, readTextFile, withWorkspace, writeFields, type CliIo } from './context.js';

/** A user's member data as `set-member` prints it. */
const memberFields = (userId: string, member: MemberData): [string, string][] => [
  ['user_id', userId],
  ['ucc', member.ucc ?? 'none'],
  ['pan', member.pan ?? 'none'],
  ['client_type', member.clientType],
  ['custodian_code', member.custodianCode ?? 'none'],
];

/** 18 random bytes: a 24-character password with 144 bits of entropy. */
const generatePassword = () => randomBytes(18).toString('base64url');

async function readPassword(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  // `echo secret | ordergate ...` and here-strings end with one newline that is not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** The password of `add` and `reset-password`: stdin with --password-stdin, else a generated one. */
async function chosenPassword(io: CliIo, fromStdin: boolean | undefined): Promise<string> {
  if (!fromStdin) return generatePassword();
  if ('isTTY' in io.stdin && io.stdin.isTTY) io.stderr.write('Type the password, then Ctrl-D:\n');
  const password = await readPassword(io.stdin);
  if (password === '') throw new CliError('--password-stdin: stdin was empty');
  return password;
}

const demoDisabledHint = (userId: string) =>
  `disabled user ${userId}: its password is published by \`ordergate demo\` and \`ordergate demo-offer\`, and this database now has real users (\`ordergate users enable ${userId}\` undoes it)\n`;

/** The categories an operator may name: the framework's five, and NON_RETAIL, the old name of NII. */
const CATEGORY_CHOICES = [...USER_CATEGORIES, 'NON_RETAIL'];
const categoryHelp = `the user's OFS category: ${USER_CATEGORIES.join(', ')} (docs/design/ofs.md); NON_RETAIL is NII`;
const marginHelp = `the margin of an ${ZERO_MARGIN_CATEGORIES.join(', ')} user's bids: H (100 %) or T (0 %, its custodian confirms)`;

interface AddOptions {
  category: string;
  margin: MarginType;
  passwordStdin?: boolean;
  totp?: boolean;
  operator?: boolean;
}

export function usersCommand(io: CliIo): Command {
  const users = new Command('users').description('manage users');
  users
    .command('add')
    .description('create a user; fails, changing nothing, when the user id exists')
    .argument('<user_id>', '1 to 64 letters, digits, dots, dashes or underscores')
    .addOption(new Option('--category <category>', categoryHelp).choices(CATEGORY_CHOICES).default('RETAIL'))
    .addOption(new Option('--margin <type>', marginHelp).choices(MARGIN_TYPES).default('H'))
    .option(
      '--password-stdin',
      'read the password from stdin (one trailing newline is dropped) instead of generating one',
    )
    .option('--totp', 'enrol the user in TOTP: login then needs a code in second_auth')
    .option('--operator', 'make the user an operator: they may read the book of demand of every OFS issue')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout, one "name: value" per line:',
        '  user_id: <user_id>',
        `  category: ${USER_CATEGORIES.join('|')}`,
        '  margin: H|T',
        '  password: <generated password>      (only without --password-stdin)',
        '  totp_uri: otpauth://totp/...        (only with --totp; scan it into an authenticator app)',
        '  operator: yes                       (only with --operator)',
      ].join('\n'),
    )
    .action(async (userId: string, options: AddOptions) => {
      const password = await chosenPassword(io, options.passwordStdin);
      await withWorkspace(io, async ({ admin, store, users: userRepository }) => {
        const user = await admin.addUser(userId, password, {
          category: userCategoryOf(options.category)!,
          marginType: options.margin,
          totp: options.totp === true,
        });
        // Made an operator right after its creation; should the command die in between, the user is only
        // a trader, which `set-operator` mends.
        if (options.operator) await userRepository.setOperator(user.userId, Date.now());
        const fields: [string, string][] = [
          ['user_id', user.userId],
          ['category', userCategoryOf(options.category)!],
          ['margin', options.margin],
        ];
        if (!options.passwordStdin) fields.push(['password', password]);
        if (user.totpSecret !== null) fields.push(['totp_uri', totpUri(user.totpSecret, user.userId)]);
        if (options.operator) fields.push(['operator', 'yes']);
        writeFields(io, fields);
        io.stderr.write(`created user ${user.userId} in ${store.location}\n`);
        for (const userId of user.disabledDemoUsers) io.stderr.write(demoDisabledHint(userId));
      });
    });
  users
    .command('revoke-sessions')
    .description(
      'end every session of a user at once, on every node: their access tokens answer 401 (they may log in again)',
    )
    .argument('<user_id>')
    .addHelpText('after', '\nPrints on stdout:\n  user_id: <user_id>\n  sessions_revoked: <how many were open>')
    .action(async (userId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        const revoked = await admin.revokeSessions(userId);
        writeFields(io, [
          ['user_id', userId],
          ['sessions_revoked', String(revoked)],
        ]);
      });
    });
  users
    .command('disable')
    .description('shut a user out: their sessions end at once, on every node, and every login answers 403 (e-212)')
    .argument('<user_id>')
    .addHelpText(
      'after',
      '\nPrints on stdout:\n  user_id: <user_id>\n  disabled: yes\n  sessions_revoked: <how many were open>',
    )
    .action(async (userId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        const revoked = await admin.disableUser(userId);
        writeFields(io, [
          ['user_id', userId],
          ['disabled', 'yes'],
          ['sessions_revoked', String(revoked)],
        ]);
      });
    });
  users
    .command('enable')
    .description('let a disabled user log in again (the sessions that disabling ended stay ended)')
    .argument('<user_id>')
    .addHelpText('after', '\nPrints on stdout:\n  user_id: <user_id>\n  disabled: no')
    .action(async (userId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        await admin.enableUser(userId);
        writeFields(io, [
          ['user_id', userId],
          ['disabled', 'no'],
        ]);
      });
    });
  users
    .command('reset-password')
    .description('set a new password for a user (hashed with scrypt) and end every session of the user')
    .argument('<user_id>')
    .option(
      '--password-stdin',
      'read the new password from stdin (one trailing newline is dropped) instead of generating one',
    )
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout, one "name: value" per line:',
        '  user_id: <user_id>',
        '  sessions_revoked: <how many were open>',
        '  password: <generated password>      (only without --password-stdin)',
      ].join('\n'),
    )
    .action(async (userId: string, options: { passwordStdin?: boolean }) => {
      const password = await chosenPassword(io, options.passwordStdin);
      await withWorkspace(io, async ({ admin }) => {
        const revoked = await admin.resetPassword(userId, password);
        const fields: [string, string][] = [
          ['user_id', userId],
          ['sessions_revoked', String(revoked)],
        ];
        if (!options.passwordStdin) fields.push(['password', password]);
        writeFields(io, fields);
      });
    });
  users
    .command('set-operator')
    .description(
      'make a user an operator (who may read the book of demand of every OFS issue) or not; takes effect at once, on every node',
    )
    .argument('<user_id>')
    .addArgument(new Argument('<operator>', 'true or false').choices(['true', 'false']))
    .addHelpText('after', '\nPrints on stdout:\n  user_id: <user_id>\n  operator: yes|no')
    .action(async (userId: string, operator: 'true' | 'false') => {
      await withWorkspace(io, async ({ users: userRepository }) => {
        if (!(await userRepository.setOperator(userId, operator === 'true' ? Date.now() : null)))
          throw new CliError(`no user ${userId}`);
        writeFields(io, [
          ['user_id', userId],
          ['operator', operator === 'true' ? 'yes' : 'no'],
        ]);
      });
    });
  users
    .command('set-category')
    .description(
      "set a user's OFS category and margin type; takes effect at once, on every node; bids already placed keep theirs",
    )
    .argument('<user_id>')
    .addArgument(new Argument('<category>', categoryHelp).choices(CATEGORY_CHOICES))
    .addOption(new Option('--margin <type>', marginHelp).choices(MARGIN_TYPES).default('H'))
    .addHelpText(
      'after',
      `\nPrints on stdout:\n  user_id: <user_id>\n  category: ${USER_CATEGORIES.join('|')}\n  margin: H|T`,
    )
    .action(async (userId: string, category: string, options: { margin: MarginType }) => {
      await withWorkspace(io, async ({ admin, users }) => {
        const stored = await admin.setCategory(userId, category, options.margin);
        writeFields(io, [
          ['user_id', userId],
          ['category', stored],
          ['margin', options.margin],
        ]);
        if (options.margin === 'T' && (await users.find(userId))?.zeroMarginLimitPaise === null) {
          io.stderr.write(
            `no 0 % margin limit is set for ${userId}: its 0 %-margin bids are refused (e-384) until \`ordergate users zero-margin-limit ${userId} RUPEES\`\n`,
          );
        }
      });
    });
  users
    .command('set-member')
    .description(
      "record a user's member data, what the exchange needs with its bids (docs/design/member-data.md): only the fields given change; takes effect at the next bid, on every node",
    )
    .argument('<user_id>')
    .option('--ucc <code>', "the client's Unique Client Code: 1 to 10 letters or digits, no other user's")
    .option('--pan <pan>', "the client's PAN: five letters, four digits, a letter (users may share one)")
    .option('--client-type <type>', `${CLIENT_TYPES.join(' (a client) or ')} (the member itself)`)
    .option(
      '--custodian <code>',
      "the custodian's participant id (1 to 12 letters or digits), which MF, IC, OTHS and 0 %-margin bids need; none: no custodian",
    )
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout:',
        '  user_id: <user_id>',
        '  ucc: <UCC>|none',
        '  pan: <PAN>|none',
        '  client_type: CLI|PRO',
        '  custodian_code: <code>|none',
        '',
        'Letters are capitalised. A bid, a modification or a carry-forward of a user without a UCC or PAN, or of an',
        'MF, IC, OTHS or 0 %-margin bid without a custodian code, answers 422 e-385.',
      ].join('\n'),
    )
    .action(
      async (userId: string, options: { ucc?: string; pan?: string; clientType?: string; custodian?: string }) => {
        await withWorkspace(io, async ({ admin }) => {
          const member = await admin.setMemberData(userId, {
            ...(options.ucc !== undefined && { ucc: options.ucc }),
            ...(options.pan !== undefined && { pan: options.pan }),
            ...(options.clientType !== undefined && { clientType: options.clientType.toUpperCase() }),
            ...(options.custodian !== undefined && {
              custodianCode: options.custodian.toLowerCase() === 'none' ? null : options.custodian,
            }),
          });
          writeFields(io, memberFields(userId, member));
        });
      },
    );
  users
    .command('import-clients')
    .description(
      'set the member data of many clients from a CSV file, creating the users that do not exist (with no usable password: `users reset-password` gives one); each line is applied or refused on its own',
    )
    .argument('<file.csv>', 'a header row (user_id,ucc,pan[,client_type][,custodian_code]), then a client a line')
    .option('--json', 'print the report as one JSON object')
    .addHelpText(
      'after',
      [
        '',
        "Each line sets its user's member data whole (an empty client_type is CLI, an empty custodian_code none).",
        'Prints a line per record: line <n> <user_id>: created|updated|unchanged|refused: <why>, then the counts',
        '(--json: {"lines": [{"line", "user_id", "outcome", "reason"}], "created", "updated", "unchanged",',
        '"refused"}). Exit code 0: every line applied; 2: some refused (the others are applied); 1: the file is no',
        'clients file, nothing changed. The file format: docs/operations.md, "The clients file".',
      ].join('\n'),
    )
    .action(async (file: string, options: { json?: boolean }) => {
      const text = await readTextFile(file);
      await withWorkspace(io, async ({ admin }) => {
        const { lines, disabledDemoUsers } = await admin.importClients(text);
        const count = (outcome: string) => lines.filter((line) => line.outcome === outcome).length;
        const counts = {
          created: count('created'),
          updated: count('updated'),
          unchanged: count('unchanged'),
          refused: count('refused'),
        };
        if (options.json) {
          const report = lines.map((line) => ({
            line: line.line,
            user_id: line.userId,
            outcome: line.outcome,
            ...(line.reason !== undefined && { reason: line.reason }),
          }));
          io.stdout.write(`${JSON.stringify({ lines: report, ...counts })}\n`);
        } else {
          for (const line of lines)
            io.stdout.write(
              // A file's text may hold line breaks and terminal controls: printed escaped, a line a record.
              `line ${line.line} ${line.userId === null ? '-' : displayToken(line.userId)}: ${line.outcome}${line.reason === undefined ? '' : `: ${withUnsafeEscaped(line.reason)}`}\n`,
            );
          writeFields(
            io,
            Object.entries(counts).map(([name, n]) => [name, String(n)]),
          );
        }
        if (counts.created > 0)
          io.stderr.write(
            `created ${counts.created} users with no usable password: \`ordergate users reset-password USER\` gives each one\n`,
          );
        for (const userId of disabledDemoUsers) io.stderr.write(demoDisabledHint(userId));
        if (counts.refused > 0)
          throw new CliError(`${counts.refused} of ${lines.length} lines refused (the others are applied)`, 2);
      });
    });
  users
    .command('zero-margin-limit')
    .description(
      "set the most a user's 0 %-margin bids may total, live or allotted and not settled (the custodian arrangement's limit); `none`: no limit set, and no 0 %-margin bid is taken. Takes effect at the next bid, on every node",
    )
    .argument('<user_id>')
    .argument('<rupees>', 'rupees with at most two decimals, e.g. 500000000, or none')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout:',
        '  user_id: <user_id>',
        '  zero_margin_limit: <rupees>|none',
        '',
        'An MF, IC or OTHS user with margin T (`ordergate users set-category USER MF --margin T`) bids in an',
        "offer's non-retail series at 0 % margin: no funds are blocked, and such a bid can be neither cancelled",
        'nor lowered. Its live 0 %-margin bids, valued at their prices, total at most this limit; beyond it a bid',
        'or a raise answers 422 e-384. Bids already live stay when the limit is lowered.',
      ].join('\n'),
    )
    .action(async (userId: string, rupees: string) => {
      await withWorkspace(io, async ({ admin }) => {
        const limit = await admin.setZeroMarginLimit(userId, rupees);
        writeFields(io, [
          ['user_id', userId],
          ['zero_margin_limit', limit === null ? 'none' : formatPrice(limit)],
        ]);
      });
    });
  users
    .command('totp')
    .description(
      'enrol an existing user in TOTP with a new secret: every later login needs a code in second_auth; run again, it replaces the secret (codes of the old one are refused at once)',
    )
    .argument('<user_id>')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout, one "name: value" per line:',
        '  user_id: <user_id>',
        '  totp_uri: otpauth://totp/...        (scan it into an authenticator app; shown once)',
        '',
        'A second run replaces the secret: the old one stops working at once, and the URI printed is the only',
        "way to the new one. The user's open sessions stay open (`ordergate users revoke-sessions` ends them).",
      ].join('\n'),
    )
    .action(async (userId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        const { totpSecret, replaced } = await admin.enrolTotp(userId);
        writeFields(io, [
          ['user_id', userId],
          ['totp_uri', totpUri(totpSecret, userId)],
        ]);
        io.stderr.write(
          replaced
            ? `replaced the TOTP secret of user ${userId}: codes of the old secret are refused from now on\n`
            : `enrolled user ${userId} in TOTP: every login now needs a code in second_auth\n`,
        );
      });
    });
  users
    .command('second-factor')
    .description(
      'exempt a user from the second factor at login (--exempt: with LOGIN_SECOND_FACTOR_REQUIRED=true they log in with the password alone) or end the exemption (--require); takes effect at the next login, on every node',
    )
    .argument('<user_id>')
    .addOption(new Option('--exempt', 'exempt the user: a login without TOTP is accepted').conflicts('require'))
    .addOption(
      new Option(
        '--require',
        'end the exemption: without TOTP the user is refused (e-216) while LOGIN_SECOND_FACTOR_REQUIRED=true',
      ),
    )
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout:',
        '  user_id: <user_id>',
        '  second_factor: exempt|required|enrolled',
        '',
        'enrolled: the user is enrolled in TOTP (`ordergate users totp`) and logs in with a code, exempt or not;',
        'exempt: the user logs in with the password alone; required: not enrolled nor exempt, refused with',
        '403 e-216 while LOGIN_SECOND_FACTOR_REQUIRED=true (the production setting).',
      ].join('\n'),
    )
    .action(async (userId: string, options: { exempt?: boolean; require?: boolean }) => {
      if (options.exempt !== true && options.require !== true) throw new CliError('give --exempt or --require');
      await withWorkspace(io, async ({ admin, config }) => {
        const state = await admin.setSecondFactorExempt(userId, options.exempt === true);
        writeFields(io, [
          ['user_id', userId],
          ['second_factor', state],
        ]);
        if (state === 'enrolled' && options.exempt === true) {
          io.stderr.write(
            `user ${userId} is enrolled in TOTP: it still logs in with a code; the exemption is recorded\n`,
          );
        }
        if (state === 'required' && config.limits.secondFactorRequired) {
          io.stderr.write(
            `user ${userId} is not enrolled in TOTP: its logins are refused (e-216) until \`ordergate users totp ${userId}\`\n`,
          );
        }
      });
    });
  users
    .command('totp-unlock')
    .description(
      "unlock a user's second factor after too many wrong TOTP codes (e-217), and clear the count of wrong codes; recorded in `ordergate users totp-log`",
    )
    .argument('<user_id>')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout:',
        '  user_id: <user_id>',
        '  was_locked: yes|no',
        '  codes_cleared: <the wrong codes counted since the last login that passed>',
        '',
        'A user is locked after LOGIN_SECOND_FACTOR_LOCKOUT_AFTER wrong codes in a row (10 by default), from any',
        "address and with or without an API key: someone holds the user's password. Before unlocking, make sure",
        'the user knows; `ordergate users reset-password` and `ordergate users totp` (a new secret) are the',
        'other half of the answer.',
      ].join('\n'),
    )
    .action(async (userId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        const { failures, wasLocked } = await admin.unlockSecondFactor(userId);
        writeFields(io, [
          ['user_id', userId],
          ['was_locked', wasLocked ? 'yes' : 'no'],
          ['codes_cleared', String(failures)],
        ]);
      });
    });
  users
    .command('totp-log')
    .description("a user's second-factor count and lock now, and every lock and unlock, oldest first")
    .argument('<user_id>')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout:',
        '  user_id: <user_id>',
        '  codes_counted: <TOTP codes checked since the last login that passed>',
        '  locked_at: <ISO instant>|no',
        'then a line per lock or unlock: <ISO instant> locked|unlocked by system|operator: <why>',
      ].join('\n'),
    )
    .action(async (userId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        const { count, events } = await admin.secondFactorLog(userId);
        writeFields(io, [
          ['user_id', userId],
          ['codes_counted', String(count.failures)],
          ['locked_at', count.lockedAt === null ? 'no' : isoInstant(count.lockedAt)],
        ]);
        for (const event of events)
          io.stdout.write(`${isoInstant(event.at)} ${event.event} by ${event.actor}: ${event.detail}\n`);
      });
    });
  return users;
}
