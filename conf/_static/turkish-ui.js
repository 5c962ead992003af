/* Turkish for the words that scripts write into the page at run time, which no .po file reaches:
 * sphinx-copybutton's tooltips ("Copy", "Copied!") and the summary line of Sphinx's search page
 * (Sphinx's Turkish catalog leaves it empty). conf.py loads this file only into the Turkish book,
 * after copybutton.js and translations.js and before the page has loaded.
 */
(() => {
  if (document.documentElement.lang !== "tr") return;

  // sphinx-copybutton 0.5.2 picks its `messages[locale]` by <html lang> and has no Turkish.
  // Its `messages`, `locale`, `iconCopy` and `iconCheck` are globals of copybutton.js; the buttons
  // are added on DOMContentLoaded, so filling them in now is in time.
  if (typeof messages !== "undefined" && typeof locale !== "undefined") {
    const english = messages[locale];
    messages.tr = {
      copy: "Kopyala",
      copy_to_clipboard: "Panoya kopyala",
      copy_success: "Kopyalandı!",
      copy_failure: "Kopyalanamadı",
    };
    locale = "tr";
    iconCopy = iconCopy.replace(`<title>${english.copy_to_clipboard}</title>`, `<title>${messages.tr.copy_to_clipboard}</title>`);
    iconCheck = iconCheck.replace(`<title>${english.copy_success}</title>`, `<title>${messages.tr.copy_success}</title>`);
  }

  // Sphinx's search summary, in the singular/plural pair that searchtools.js asks for. Sphinx's
  // Turkish catalog has it empty, and its plural rule "(n > 1)" gives true/false, which are no index
  // of that pair: the search page then throws "reading 'replace'" of undefined after every search.
  if (typeof Documentation !== "undefined") {
    Object.assign(Documentation.TRANSLATIONS, {
      "Search finished, found one page matching the search query.": [
        "Arama bitti: sorguyla eşleşen bir sayfa bulundu.",
        "Arama bitti: sorguyla eşleşen ${resultCount} sayfa bulundu.",
      ],
    });
    const pluralRule = Documentation.PLURAL_EXPR;
    Documentation.PLURAL_EXPR = (n) => Number(pluralRule(n));
  }
})();
