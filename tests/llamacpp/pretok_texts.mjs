// pretok_texts.mjs SEED COUNT [MAXLEN [wide]] - COUNT random texts (1 to MAXLEN,
// default 400, UTF-16 units; a JSON array) drawn from the characters and strings the pre-tokenizer
// regexes treat differently: ASCII and non-ASCII letters of each case and
// a titlecase one, CJK and Thai letters, combining marks, ASCII and other
// digits, spaces, tabs, CR, LF, no-break and ideographic spaces, slashes,
// apostrophes with contraction letters in both cases, punctuation,
// emoji (with a modifier and a zero-width joiner), control characters.
// "wide" adds what the other pre-tokenizers tell apart: ASCII symbols and
// punctuation one by one, non-ASCII punctuation and symbols, Hiragana,
// Katakana, Hangul, fullwidth forms, the edges of DeepSeek's letter and CJK
// ranges, digit runs.
// The same SEED gives the same texts (xorshift32).
const alphabet = ["a", "b", "z", "A", "B", "Z", "É", "é", "ß", "Ω", "ω", "ǅ", "Ǆ", "и", "Д", "東", "ก", "\u0301", "\u0308",
                  "\u0E31", "0", "7", "١", "½", "Ⅻ", " ", " ", " ", "\t", "\n", "\r", "/", "'", "'", "s", "S", "t", "re",
                  "VE", "ll", "M", "d", "!", ".", "-", "_", "(", "$", "\u00a0", "\u3000", "🙂", "👍🏽", "\u200d",
                  "\u0001", "\u0085"];
if (process.argv[5] === "wide")
    alphabet.push("+", "<", "=", ">", "^", "`", "|", "~", "#", "%", "&", "*", ",", ":", ";", "?", "@", "[", "]", "{",
                  "}", "\\", "\"", "。", "，", "、", "—", "…", "“", "”", "‘", "’", "！", "：", "€", "©", "±", "→", "µ",
                  "ぁ", "カ", "ー", "한", "ㄱ", "ㄅ", "Ａ", "ｚ", "！", "～", "\u0800", "\u4E00", "\u9FA5", "\u9FA6",
                  "ʔ", "ƻ", "Ꭰ", "ﬀ", "123", "4567", "٣", "\u3000", "\u2028", "\u00ad", "\u0600", "\u0964");
let x = Number(process.argv[2]) >>> 0 || 1;
const rnd = () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 4294967296; };
const texts = [];
for (let t = 0; t < Number(process.argv[3]); t++) {
    let s = "";
    const len = 1 + Math.floor(rnd() * (Number(process.argv[4]) || 400));
    while (s.length < len) s += alphabet[Math.floor(rnd() * alphabet.length)];
    texts.push(s);
}
console.log(JSON.stringify(texts));
