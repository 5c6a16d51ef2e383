/** `ordergate apikeys create|revoke`: API keys are shown once, at creation; only their hash is stored. */
import { Command } from 'commander';
import { withWorkspace, writeFields, type CliIo } from './context.js';

export function apiKeysCommand(io: CliIo): Command {
  const apiKeys = new Command('apikeys').description('manage API keys (the x-api-key header)');
  apiKeys
    .command('create')
    .description('create a new API key for a user')
    .argument('<user_id>')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout:',
        '  user_id: <user_id>',
        '  key_id: <key_id>      (public; pass it to `ordergate apikeys revoke`)',
        '  <the API key>         (alone on the last line; it cannot be shown again)',
      ].join('\n'),
    )
    .action(async (userId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        const { keyId, apiKey } = await admin.createApiKey(userId);
        writeFields(io, [
          ['user_id', userId],
          ['key_id', keyId],
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
  return apiKeys;
}
