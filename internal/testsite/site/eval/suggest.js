// suggest.js — an autocomplete for the evaluation pages: suggest(input,
// url) fetches url?q=TEXT 250 ms after the last keystroke and lists the
// answers under the field as role=option items; choosing one writes its
// label into the field and its code into input.dataset.code.
function suggest(input, url) {
  'use strict';
  var box = document.createElement('ul');
  box.setAttribute('role', 'listbox');
  box.className = 'menu hidden';
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.parentElement.style.position = 'relative';
  input.insertAdjacentElement('afterend', box);
  var timer = null, seq = 0;
  input.addEventListener('input', function () {
    delete input.dataset.code;
    clearTimeout(timer);
    timer = setTimeout(function () {
      var mine = ++seq;
      fetch(url + '?q=' + encodeURIComponent(input.value)).then(function (r) { return r.json(); }).then(function (list) {
        if (mine !== seq) return;
        box.innerHTML = '';
        list.forEach(function (e) {
          var li = document.createElement('li');
          li.setAttribute('role', 'option');
          li.style.cursor = 'pointer';
          li.textContent = e.label;
          li.addEventListener('click', function () {
            input.value = e.label; input.dataset.code = e.code;
            box.classList.add('hidden');
          });
          box.appendChild(li);
        });
        box.classList.toggle('hidden', list.length === 0);
        input.setAttribute('aria-expanded', list.length > 0 ? 'true' : 'false');
      });
    }, 250);
  });
}
