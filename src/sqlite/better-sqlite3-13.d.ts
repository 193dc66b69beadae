/** better-sqlite3 13 under an alias (package.json): the same API as 12, whose types describe it. */
declare module 'better-sqlite3-13' {
  import Database from 'better-sqlite3'
  export default Database
}
