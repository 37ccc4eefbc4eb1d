import type { Command } from '../command.ts';

export const login: Command = {
  name: 'login',
  summary: 'save an API token for a Slipway service',
  help: `Usage: slipway login --api-url <url> [--token <token>]

Checks the token against the service and saves both in your config directory
($SLIPWAY_CONFIG_DIR, else $XDG_CONFIG_HOME/slipway, else ~/.config/slipway), readable
by you alone. The token is read from --token, else SLIPWAY_TOKEN, else standard input:

  echo "$TOKEN" | slipway login --api-url https://slipway.example.com

--api-url defaults to SLIPWAY_API_URL, then to the service you last logged in to.`,
  options: { 'api-url': { type: 'string' }, token: { type: 'string' } },
  run: (p, io) => import('../run/login.ts').then((m) => m.login(p, io)),
};

export const logout: Command = {
  name: 'logout',
  summary: 'forget the saved token',
  help: `Usage: slipway logout

Deletes the saved login from this computer. The token itself stays valid until you revoke
it (DELETE /v1/user/tokens/<id>).`,
  options: {},
  run: (p, io) => import('../run/login.ts').then((m) => m.logout(p, io)),
};

export const whoami: Command = {
  name: 'whoami',
  summary: 'show who the token belongs to',
  help: `Usage: slipway whoami [--json]

Prints the e-mail address of the token's user, and with --json the service and the user's
organizations.`,
  options: {},
  run: (p, io) => import('../run/login.ts').then((m) => m.whoami(p, io)),
};
