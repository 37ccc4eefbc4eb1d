import type { Command } from '../command.ts';

export const deploy: Command = {
  name: 'deploy',
  summary: 'upload a folder, build it in Slipway, print its URL',
  help: `Usage: slipway deploy [folder] [--prod] [--prebuilt] [--project <p>] [--org <o>] [--yes]
                      [--message <text>] [--no-cache] [--no-wait] [--json]
       slipway deploy --git [--branch <b>] [--commit <c>] [--prod] [--project <p>] [--org <o>]
                      [--message <text>] [--no-cache] [--no-wait] [--json]

Uploads the folder (default: the current one) and deploys it: only files Slipway does not
have yet are sent. Files that .gitignore or .slipwayignore exclude, and .git and .slipway,
stay behind; so do .env files (but .env.example, .env.sample, .env.template) and
node_modules, which deploy names on a "Left out:" line. A negation in .slipwayignore
(!.env.production) uploads one of those. Slipway builds the files as it builds a repository,
the build log is shown as it runs, and the deployment's URL is printed when it is live.

  --prod         make it the production deployment (default: a preview with its own URL)
  --git          build the project's repository instead of uploading a folder: the head
                 of --branch (default the project's branch), or --commit on it
  --prebuilt     the folder is build output (e.g. dist): serve it as it is, no build;
                 only .slipwayignore applies, and node_modules is uploaded
  --project, --org
                 the project (name or prj_ id); default the one \`slipway link\` remembered
  --yes, -y      in a folder not linked yet, create a project named after the folder (in
                 --org, default your personal organization) and link it, without asking
                 (on a terminal deploy asks; elsewhere it needs --yes or \`slipway link\`)
  --message      a note shown with the deployment
  --no-cache     build without the project's build cache (and leave it as it is)
  --no-wait      print the deployment's URL once it is queued, without waiting
  --json         print the deployment as JSON instead of its URL

Exits 0 when the deployment is live, 1 when it failed.

  slipway deploy                     # preview of the current folder
  slipway deploy --yes               # the same in a new folder: creates its project first
  slipway deploy --git --branch feature/login   # a preview of a branch of the repository
  npm run build && slipway deploy dist --prebuilt --prod`,
  options: {
    prod: { type: 'boolean' },
    prebuilt: { type: 'boolean' },
    project: { type: 'string' },
    org: { type: 'string' },
    message: { type: 'string' },
    'no-cache': { type: 'boolean' },
    'no-wait': { type: 'boolean' },
    yes: { type: 'boolean', short: 'y' },
    git: { type: 'boolean' },
    branch: { type: 'string' },
    commit: { type: 'string' },
  },
  run: (p, io) => import('../run/deploy.ts').then((m) => m.deploy(p, io)),
};
