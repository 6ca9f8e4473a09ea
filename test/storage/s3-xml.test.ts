/** The tiny XML reader used by the S3 driver (no server needed). */
import { describe, expect, it } from "vitest";
import { XmlError, decodeEntities, escapeXml, parseXml } from "../../src/storage/s3/xml.js";
import { child, children, childText } from "../../src/storage/s3/xml.js";

describe("s3 xml", () => {
  it("parses a ListObjectsV2 answer with entities and special key characters", () => {
    const doc = `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>a/</Prefix>
  <IsTruncated>true</IsTruncated><NextContinuationToken>1/x+y=</NextContinuationToken>
  <Contents><Key>a/b+c=d@e:f!0001</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>&quot;5d41&quot;</ETag><Size>5</Size></Contents>
  <Contents><Key>a/&lt;odd&gt; &amp; &#x41;&#66;&apos;</Key><Size>0</Size></Contents>
</ListBucketResult>`;
    const root = parseXml(doc);
    expect(root.name).toBe("ListBucketResult");
    expect(childText(root, "IsTruncated")).toBe("true");
    expect(childText(root, "NextContinuationToken")).toBe("1/x+y=");
    const contents = children(root, "Contents");
    expect(contents.map((c) => childText(c, "Key"))).toEqual(["a/b+c=d@e:f!0001", "a/<odd> & AB'"]);
    expect(childText(contents[0]!, "ETag")).toBe('"5d41"');
    expect(child(contents[1]!, "LastModified")).toBeUndefined();
  });

  it("parses errors, self-closing tags, comments, CDATA and attributes with '>'", () => {
    const root = parseXml(`<Error a="x>y"><!-- c --><Code>NoSuchKey</Code><Empty/><Message><![CDATA[a <b> & c]]></Message></Error>`);
    expect(childText(root, "Code")).toBe("NoSuchKey");
    expect(childText(root, "Empty")).toBe("");
    expect(childText(root, "Message")).toBe("a <b> & c");
  });

  it("parses InitiateMultipartUpload", () => {
    const root = parseXml(`<?xml version="1.0"?><InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>2~abc&amp;def</UploadId></InitiateMultipartUploadResult>`);
    expect(childText(root, "UploadId")).toBe("2~abc&def");
  });

  it("rejects malformed documents", () => {
    for (const bad of ["", "<a>", "<a></b>", "<a/><b/>", "text", "<a>&bogus;</a>", "<!DOCTYPE x><a/>", "<a>&#xFFFFFFF;</a>"]) {
      expect(() => parseXml(bad), bad).toThrow(XmlError);
    }
  });

  it("escapes and decodes round-trip", () => {
    const text = `a<b>&"c'`;
    expect(escapeXml(text)).toBe("a&lt;b&gt;&amp;&quot;c&apos;");
    expect(decodeEntities(escapeXml(text))).toBe(text);
    expect(decodeEntities("&#128512;")).toBe("😀");
  });
});
