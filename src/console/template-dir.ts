/**
 * Where the console's templates, stylesheet and script are: beside this module in src/ (tests run
 * the TypeScript), in dist/console/ after `tsc`, and beside the chunk that holds this module in
 * dist-bundle/ (scripts/bundle.mjs copies them there). No front-end build: the files are served as written.
 */
import { fileURLToPath } from 'node:url'

export const TEMPLATE_DIR = fileURLToPath(new URL('./templates/', import.meta.url))
