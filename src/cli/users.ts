/** `ordergate users add`: create a user with a generated (or given) password, optionally enrolled in TOTP. */
import { randomBytes } from 'node:crypto';
import { Command, Option } from 'commander';
import { totpUri } from '../auth/credentials.js';
import { BIDDER_CATEGORIES, type BidderCategory } from '../domain/ofs-rules.js';
import { CliError, withWorkspace, writeFields, type CliIo } from './context.js';

/** 18 random bytes: a 24-character password with 144 bits of entropy. */
const generatePassword = () => randomBytes(18).toString('base64url');

async function readPassword(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  // `echo secret | ordergate ...` and here-strings end with one newline that is not part of the password.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

interface AddOptions {
  category: BidderCategory;
  passwordStdin?: boolean;
  totp?: boolean;
}

export function usersCommand(io: CliIo): Command {
  const users = new Command('users').description('manage users');
  users
    .command('add')
    .description('create a user; fails, changing nothing, when the user id exists')
    .argument('<user_id>', '1 to 64 letters, digits, dots, dashes or underscores')
    .addOption(new Option('--category <category>', "the user's OFS bidder category").choices(BIDDER_CATEGORIES).default('RETAIL'))
    .option('--password-stdin', 'read the password from stdin (one trailing newline is dropped) instead of generating one')
    .option('--totp', 'enrol the user in TOTP: login then needs a code in second_auth')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout, one "name: value" per line:',
        '  user_id: <user_id>',
        '  category: RETAIL|NON_RETAIL',
        '  password: <generated password>      (only without --password-stdin)',
        '  totp_uri: otpauth://totp/...        (only with --totp; scan it into an authenticator app)',
      ].join('\n'),
    )
    .action(async (userId: string, options: AddOptions) => {
      if (options.passwordStdin && 'isTTY' in io.stdin && io.stdin.isTTY) io.stderr.write('Type the password, then Ctrl-D:\n');
      const password = options.passwordStdin ? await readPassword(io.stdin) : generatePassword();
      if (options.passwordStdin && password === '') throw new CliError('--password-stdin: stdin was empty');
      await withWorkspace(io, async ({ admin, store }) => {
        const user = await admin.addUser(userId, password, { category: options.category, totp: options.totp === true });
        const fields: [string, string][] = [
          ['user_id', user.userId],
          ['category', options.category],
        ];
        if (!options.passwordStdin) fields.push(['password', password]);
        if (user.totpSecret !== null) fields.push(['totp_uri', totpUri(user.totpSecret, user.userId)]);
        writeFields(io, fields);
        io.stderr.write(`created user ${user.userId} in ${store.location}\n`);
      });
    });
  return users;
}
