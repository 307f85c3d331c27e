// The bot token page: copy the token (shown once) or a connect command to the clipboard. Every button
// with data-copy="<element id>" copies that element's text; without JavaScript the text is selectable.
(function () {
  function copy(button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) { return; }
    var text = source.textContent;
    function done() { button.textContent = "Copied"; }
    if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(text).then(done); return; }
    var range = document.createRange(); range.selectNodeContents(source);
    var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range); document.execCommand("copy"); done();
  }
  var buttons = document.querySelectorAll("button[data-copy]");
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener("click", function () { copy(this); });
  }
})();
