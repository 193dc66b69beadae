/**
 * The console in a real browser (Debian's chromium driven by playwright-core; Playwright's own
 * browser download cannot work on these machines): a person signs in with a link, sees a held
 * payout, approves it with a reason by keyboard and finds it sent once at the fake provider,
 * rejects another, replays a failed webhook event, and signs in without JavaScript too. The
 * screenshots of docs/console.md are taken here: into CONSOLE_SCREENSHOT_DIR when set (the docs'
 * folder, to renew them), else a temporary folder.
 */
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { issueSigninLink } from '../../src/console/signin-secrets.js'
import { eventually } from '../helpers/eventually.js'
import { payouts } from '../approvals/approvals-harness.js'
import { post, PATH_TOKEN } from '../webhooks/inbox-harness.js'
import { APPROVER, hold, startConsoleRig, type ConsoleRig } from './console-rig.js'

const CHROMIUM = '/usr/bin/chromium'
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const SHOTS = process.env['CONSOLE_SCREENSHOT_DIR'] ?? mkdtempSync(join(tmpdir(), 'pap-console-shots-'))
mkdirSync(SHOTS, { recursive: true })
if (process.env['CONSOLE_SCREENSHOT_DIR'] === undefined) t.teardown(() => { rmSync(SHOTS, { recursive: true, force: true }) })

/** A fresh browser profile (--user-data-dir) per context, removed afterwards. */
async function browser (t: Test, options: { javaScriptEnabled?: boolean, viewport?: { width: number, height: number } } = {}): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'pap-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, args: FLAGS, headless: true, timezoneId: 'Africa/Nairobi', locale: 'en-GB', viewport: options.viewport ?? { width: 1100, height: 900 }, javaScriptEnabled: options.javaScriptEnabled ?? true,
  })
  t.teardown(async () => {
    await context.close()
    rmSync(profile, { recursive: true, force: true })
  })
  return context
}

/**
 * Chromium sometimes refuses a capture ("Unable to capture screenshot", most often the first after
 * a cold start) and takes the same picture when asked again a moment later: a screenshot is the
 * docs' picture, not an assertion, so that one refusal is asked again, twice at most.
 */
async function shot (page: Page, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
      return
    } catch (err) {
      if (attempt === 3 || !String(err).includes('Unable to capture screenshot')) throw err
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
}

async function linkFor (rig: ConsoleRig, email: string): Promise<string> {
  return await issueSigninLink(rig.signins, rig.url, email, Date.now())
}

t.test('a person signs in with a link, approves a held payout with a reason by keyboard, rejects another, and replays a failed event', async (t) => {
  const rig = await startConsoleRig(t, { inbox: true })
  const { inbox, app } = rig
  if (inbox === null || app === null) throw new Error('no inbox')
  const approveId = await hold(rig, 250, 'INV-2026-0042', { recipient: { name: 'Wanjiku Kamau', phone: '+254700000001' }, narration: 'Supplier invoice 42' })
  const rejectId = await hold(rig, 180, 'INV-2026-0043', { recipient: { name: 'Unknown Ltd', phone: '+254799999999' } })
  app.answer((_req, res) => { res.statusCode = 503; res.end() })
  const failed = String((await post(`${inbox.url}/webhooks/${PATH_TOKEN}`, '{"event":"payout.updated","data":{"status":"successful"}}')).json['id'])
  await eventually(async () => (await inbox.store.show(failed))?.event.status === 'failed', { what: 'the event failed' })

  const context = await browser(t)
  const page = await context.newPage()
  await page.goto(`${rig.url}/signin`)
  await shot(page, 'signin')
  await page.goto(await linkFor(rig, APPROVER))
  await page.waitForURL(`${rig.url}/approvals`)
  t.equal(new URL(page.url()).hash, '', 'the code left the address bar')
  const card = page.locator('article', { hasText: 'INV-2026-0042' })
  t.equal((await card.locator('h2.amount').innerText()).replace(/\s+/g, ' '), '250 KES', 'the amount and currency large')
  t.match(await card.locator('pre').innerText(), /"name": "Wanjiku Kamau"/, 'the request body pretty-printed')
  const held = card.locator('time').first()
  t.match(await held.getAttribute('title'), /UTC$/, 'the UTC time in the title')
  t.notMatch(await held.innerText(), /UTC/, 'the time shown in the browser\'s time zone')
  await shot(page, 'pending')

  await card.getByLabel('Reason').fill('Invoice 42 checked against the PO')
  await page.keyboard.press('Tab')
  t.equal(await page.evaluate('document.activeElement.textContent'), 'Approve…', 'the Approve button is next by keyboard')
  await page.keyboard.press('Enter')
  await page.waitForURL(`${rig.url}/approvals/${approveId}/review`)
  t.match(await page.locator('h1').innerText(), /Approve this payment\?/, 'a decision asks for confirmation')
  await shot(page, 'confirm')
  t.same(payouts(rig.provider), [], 'nothing sent before the confirmation')
  await page.getByRole('button', { name: /Yes, approve/ }).click()
  await page.waitForURL(`${rig.url}/approvals/${approveId}`)
  await eventually(() => payouts(rig.provider).length === 1, { what: 'the approved payout at the provider', timeoutMs: 2_000 })
  await page.reload()
  t.match(await page.locator('.facts').innerText(), /ann@example\.com \(console\)/)
  await shot(page, 'approved')

  await page.goto(`${rig.url}/approvals`)
  const other = page.locator('article', { hasText: 'INV-2026-0043' })
  await other.getByLabel('Reason').fill('Recipient not on the supplier list')
  await other.getByRole('button', { name: 'Reject…' }).click()
  await page.getByRole('button', { name: /Yes, reject/ }).click()
  await page.waitForURL(`${rig.url}/approvals/${rejectId}`)
  t.match(await page.locator('.state').innerText(), /rejected.*Recipient not on the supplier list/s)
  await page.goto(`${rig.url}/approvals/decided`)
  await shot(page, 'decided')

  await page.goto(`${rig.url}/events`)
  await shot(page, 'events')
  app.answer((_req, res) => { res.end('ok') })
  await page.getByRole('button', { name: `Replay ${failed}` }).click()
  await page.waitForURL(`${rig.url}/events/${failed}`)
  await eventually(async () => (await inbox.store.show(failed))?.event.status === 'delivered', { what: 'the replayed event delivered', timeoutMs: 2_000 })
  await page.reload()
  t.match(await page.locator('.facts').innerText(), /delivered/)
  await shot(page, 'event')
  await page.goto(`${rig.url}/status`)
  await shot(page, 'status')
  t.equal(payouts(rig.provider).length, 1, 'the approved payout sent once, the rejected one never')
})

t.test('without JavaScript a person pastes the code and decides, on a phone-sized screen', async (t) => {
  const rig = await startConsoleRig(t)
  await hold(rig, 120, 'INV-2026-0044', { recipient: { name: 'Achieng Otieno', phone: '+254711000002' } })
  const context = await browser(t, { javaScriptEnabled: false, viewport: { width: 390, height: 844 } })
  const page = await context.newPage()
  const link = await linkFor(rig, APPROVER)
  await page.goto(link)
  t.equal(new URL(page.url()).pathname, '/signin', 'without script the link opens the form')
  await page.getByLabel('Sign-in code').fill(link.slice(link.indexOf('#') + 1))
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${rig.url}/approvals`)
  const time = page.locator('article time').first()
  t.match(await time.innerText(), /UTC$/, 'without script the UTC time is shown')
  t.equal(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), true, 'nothing wider than the phone')
  await shot(page, 'pending-phone')
  await page.getByRole('button', { name: 'Approve…' }).click()
  await page.getByRole('button', { name: /Yes, approve/ }).click()
  await eventually(() => payouts(rig.provider).length === 1, { what: 'the approved payout at the provider', timeoutMs: 2_000 })
})
