// The sign-in page: show a failure and keep the page the visitor wanted.
const q = new URLSearchParams(location.search);
document.getElementById("failed").hidden = q.get("failed") !== "1";
const next = q.get("next");
if (next && next.startsWith("/") && !next.startsWith("//")) {
  document.querySelector('input[name="next"]').value = next;
}
