// The console works without this script; it only saves typing and shows local times.
// Sign-in: the code after # goes into the form, leaves the address bar, and is posted once.
const secret = document.getElementById('secret')
function signIn () {
  if (secret === null || location.hash.length < 2) return
  secret.value = location.hash.slice(1)
  history.replaceState(null, '', location.pathname)
  secret.form.submit()
}
signIn()
// A link opened while the sign-in page is already showing changes only the fragment.
window.addEventListener('hashchange', signIn)
// Times in this browser's time zone; the UTC time stays in the title.
for (const time of document.querySelectorAll('time[datetime]')) {
  const at = new Date(time.dateTime)
  if (!Number.isNaN(at.getTime())) time.textContent = at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })
}
