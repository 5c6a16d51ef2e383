/**
 * `ordergate apikeys create|revoke|list|set-ips`: API keys are shown once, at creation; only their hash is
 * stored. SEBI's static IP rule: a key is bound to a primary and at most one secondary address
 * (`--allow-ip`), changed at most once a week (`set-ips`, `--override` recorded). docs/design/sebi-algo.md.
 */
import { Command, Option } from 'commander';
import { withWorkspace, writeFields, type CliIo } from './context.js';

export function apiKeysCommand(io: CliIo): Command {
  const apiKeys = new Command('apikeys').description('manage API keys (the x-api-key header)');
  apiKeys
    .command('create')
    .description('create a new API key for a user')
    .argument('<user_id>')
    .addOption(allowIp())
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout:',
        '  user_id: <user_id>',
        '  key_id: <key_id>      (public; pass it to `ordergate apikeys revoke`)',
        '  allowed_ips: <addresses, the primary first|->',
        '  <the API key>         (alone on the last line; it cannot be shown again)',
      ].join('\n'),
    )
    .action(async (userId: string, options: { allowIp?: string[] }) => {
      await withWorkspace(io, async ({ admin }) => {
        const { keyId, apiKey, addresses } = await admin.createApiKey(userId, options.allowIp ?? []);
        writeFields(io, [
          ['user_id', userId],
          ['key_id', keyId],
          ['allowed_ips', addresses.length === 0 ? '-' : addresses.join(',')],
        ]);
        io.stdout.write(`${apiKey}\n`);
        io.stderr.write(`created API key ${keyId} for ${userId}; it is shown only this once\n`);
      });
    });
  apiKeys
    .command('revoke')
    .description('revoke an API key at once; calls that send it then answer 401')
    .argument('<key_id>', 'the key_id printed by `ordergate apikeys create`')
    .addHelpText('after', '\nPrints on stdout:\n  revoked: <key_id>')
    .action(async (keyId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        await admin.revokeApiKey(keyId);
        writeFields(io, [['revoked', keyId]]);
      });
    });
  apiKeys
    .command('list')
    .description("list a user's API keys (ids and dates only; keys themselves are never stored)")
    .argument('<user_id>')
    .addHelpText('after', '\nPrints on stdout one line per key:\n  <key_id> created=<ISO time> revoked=<ISO time|->')
    .action(async (userId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        for (const key of await admin.listApiKeys(userId)) {
          const revoked = key.revokedAt === null ? '-' : new Date(key.revokedAt).toISOString();
          io.stdout.write(`${key.keyId} created=${new Date(key.createdAt).toISOString()} revoked=${revoked}\n`);
        }
      });
    });
  apiKeys
    .command('ips')
    .description("a key's registered addresses and every change of them (SEBI's static IP rule)")
    .argument('<key_id>')
    .addHelpText(
      'after',
      '\nPrints on stdout:\n  allowed_ips: <addresses, the primary first|->\nthen one line per change, oldest first:\n  <ISO time> <previous|-> -> <addresses> override=<true|false>',
    )
    .action(async (keyId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        const { addresses, changes } = await admin.apiKeyAddressHistory(keyId);
        writeFields(io, [['allowed_ips', addresses.length === 0 ? '-' : addresses.join(',')]]);
        for (const change of changes) {
          io.stdout.write(
            `${new Date(change.at).toISOString()} ${change.previous ?? '-'} -> ${change.addresses} override=${change.override}\n`,
          );
        }
      });
    });
  apiKeys
    .command('set-ips')
    .description(
      "bind a key to new addresses, at once for every call that sends it; at most once a week (SEBI's static IP rule)",
    )
    .argument('<key_id>', 'the key_id printed by `ordergate apikeys create`')
    .addOption(allowIp().makeOptionMandatory())
    .option('--override', 'change them although the last change is less than a week old (recorded with the change)')
    .addHelpText('after', '\nPrints on stdout:\n  key_id: <key_id>\n  allowed_ips: <addresses, the primary first>')
    .action(async (keyId: string, options: { allowIp: string[]; override?: boolean }) => {
      await withWorkspace(io, async ({ admin }) => {
        const addresses = await admin.setApiKeyAddresses(keyId, options.allowIp, options.override === true);
        writeFields(io, [
          ['key_id', keyId],
          ['allowed_ips', addresses.join(',')],
        ]);
      });
    });
  return apiKeys;
}

/** `--allow-ip ADDR`, once for the primary address and once more for the secondary. */
function allowIp(): Option {
  return new Option(
    '--allow-ip <address>',
    'an IP address the key may be used from: the primary, then at most one secondary',
  ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
}
