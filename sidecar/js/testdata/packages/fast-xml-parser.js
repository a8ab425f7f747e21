const { XMLParser, XMLBuilder, XMLValidator } = require('fast-xml-parser');
const xml = '<root a="1"><item id="x">one</item><item id="y">two</item><empty/></root>';
const obj = new XMLParser({ ignoreAttributes: false }).parse(xml);
console.log(JSON.stringify(obj), XMLValidator.validate('<a><b></a>').err.code);
console.log(new XMLBuilder({ ignoreAttributes: false, format: true }).build(obj));
