// The bot token page: copy the token (shown once) to the clipboard.
document.getElementById("copy-token").addEventListener("click", function () {
  var text = document.getElementById("bot-token").textContent;
  var button = this;
  function done() { button.textContent = "Copied"; }
  if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(text).then(done); }
  else { var range = document.createRange(); range.selectNodeContents(document.getElementById("bot-token"));
    var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range); document.execCommand("copy"); done(); }
});
