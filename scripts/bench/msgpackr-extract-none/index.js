// msgpackr loads its native extractor inside a try block and decodes in JavaScript when it throws.
throw new Error("msgpackr-extract: native extractor not installed (JavaScript decoder in use)");
