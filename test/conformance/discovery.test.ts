/**
 * Conformance, content discovery workflow: tags/list with n and last, and the
 * referrers API (subject pushed before or after its referrers, or never;
 * filtering by artifactType; image and index referrers), in every mode
 * (auth on/off × deletes on/off).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { configBlob, content, descriptor, digestOf, errorCodes, expectDelete, imageManifest, MEDIA, MODES, pushBlob, pushManifest, randomContent, target, type Content, type Target, itIf } from "./setup.js";

const REPO = "conformance/discovery";
const TYPE_A = "application/vnd.nhl.peanut.butter.bagel";
const TYPE_B = "application/vnd.nba.strawberry.jam.croissant";
const TYPE_INDEX = "application/vnd.food.stand";
const ANNOTATION = "org.opencontainers.conformance.test";
const TAGS = ["tagtest0", "test0", "test1", "test2", "test3"];

interface Referrer {
  manifest: Content;
  mediaType: string;
  artifactType: string;
  annotation?: string;
}

function json(value: unknown): Content {
  return content(JSON.stringify(value, null, "\t"));
}

/** An artifact whose type is its config's media type (no artifactType field). */
function configArtifact(config: Content, type: string, subject: Content, annotation: string): Referrer {
  const emptyJson = content("{}");
  const manifest = json({
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: descriptor(type, config),
    layers: [descriptor(MEDIA.empty, emptyJson)],
    subject: descriptor(MEDIA.manifest, subject),
    annotations: { [ANNOTATION]: annotation },
  });
  return { manifest, mediaType: MEDIA.manifest, artifactType: type, annotation };
}

/** An artifact with an artifactType field, the empty config and the payload as its layer. */
function layerArtifact(payload: Content, type: string, subject: Content, annotation?: string): Referrer {
  const manifest = json({
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    artifactType: type,
    config: descriptor(MEDIA.empty, content("{}")),
    layers: [descriptor(type, payload)],
    subject: descriptor(MEDIA.manifest, subject),
    ...(annotation ? { annotations: { [ANNOTATION]: annotation } } : {}),
  });
  return annotation ? { manifest, mediaType: MEDIA.manifest, artifactType: type, annotation } : { manifest, mediaType: MEDIA.manifest, artifactType: type };
}

interface Index {
  schemaVersion: number;
  mediaType: string;
  manifests: { mediaType: string; digest: string; size: number; artifactType?: string; annotations?: Record<string, string> }[];
}

describe.each(MODES)("content discovery (auth $auth, deletes $deletes)", (mode) => {
  let t: Target;
  const layer = randomContent(1024);
  const configs = [configBlob("discovery-2"), configBlob("discovery-3"), configBlob("discovery-4")];
  const tagged = imageManifest(configs[0]!, [layer]);
  const neverPushed = imageManifest(configs[1]!, [layer]);
  const subject = imageManifest(configs[2]!, [layer]);
  const blobA = content("NHL Peanut Butter on my NHL bagel");
  const blobB = content("NBA Strawberry Jam on my NBA croissant");
  const configA = configArtifact(blobA, TYPE_A, subject, "test config a");
  const layerA = layerArtifact(blobA, TYPE_A, subject, "test layer a");
  const configB = configArtifact(blobB, TYPE_B, subject, "test config b");
  const layerB = layerArtifact(blobB, TYPE_B, subject, "test layer b");
  const orphan = layerArtifact(blobB, TYPE_B, neverPushed);
  const indexReferrer: Referrer = {
    manifest: json({
      schemaVersion: 2,
      mediaType: MEDIA.index,
      artifactType: TYPE_INDEX,
      manifests: [descriptor(MEDIA.manifest, configA.manifest), descriptor(MEDIA.manifest, layerA.manifest)],
      subject: descriptor(MEDIA.manifest, subject),
      annotations: { [ANNOTATION]: "test index" },
    }),
    mediaType: MEDIA.index,
    artifactType: TYPE_INDEX,
    annotation: "test index",
  };
  const referrersOfSubject = [configA, layerA, indexReferrer, configB, layerB];
  /** The OCI-Subject header of each referrer's PUT, by manifest digest. */
  const subjectHeaders = new Map<string, string | null>();

  async function pushReferrer(r: Referrer): Promise<void> {
    const put = await pushManifest(t, REPO, r.manifest.digest, r.manifest, r.mediaType);
    subjectHeaders.set(r.manifest.digest, put.headers.get("oci-subject"));
  }

  beforeAll(async () => {
    t = target(mode);
    for (const blob of [configs[0]!, layer]) await pushBlob(t, REPO, blob);
    for (const tag of TAGS.slice(1)) await pushManifest(t, REPO, tag, tagged);
    // Referrers before their subject exists: the registry must accept them.
    for (const blob of [content("{}"), blobA]) await pushBlob(t, REPO, blob);
    for (const r of [configA, layerA, indexReferrer]) await pushReferrer(r);
    await pushBlob(t, REPO, configs[2]!);
    await pushManifest(t, REPO, "tagtest0", subject);
    // Referrers after it, and one whose subject never comes.
    await pushBlob(t, REPO, blobB);
    for (const r of [configB, layerB, orphan]) await pushReferrer(r);
  });

  it("each referrer PUT answered with OCI-Subject naming its subject, pushed or not", () => {
    for (const r of referrersOfSubject) expect(subjectHeaders.get(r.manifest.digest)).toBe(subject.digest);
    expect(subjectHeaders.get(orphan.manifest.digest)).toBe(neverPushed.digest);
  });

  describe("tags/list", () => {
    const list = async (query = "") => {
      const response = await t.send("GET", `/v2/${REPO}/tags/list${query}`);
      expect(response.status).toBe(200);
      return { response, body: (await response.json()) as { name: string; tags: string[] } };
    };

    it("is 200 with the repository's name and every tag, in lexical order", async () => {
      const { response, body } = await list();
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(body).toEqual({ name: REPO, tags: TAGS });
    });

    it("n limits the page to n tags and a Link header points at the next page", async () => {
      const { response, body } = await list("?n=2");
      expect(body.tags).toEqual(TAGS.slice(0, 2));
      expect(response.headers.get("link")).toBe(`</v2/${REPO}/tags/list?n=2&last=${TAGS[1]}>; rel="next"`);
    });

    it("last starts the list after that tag; with n, at most n tags after it", async () => {
      expect((await list(`?last=${TAGS[1]}`)).body.tags).toEqual(TAGS.slice(2));
      expect((await list(`?n=2&last=${TAGS[1]}`)).body.tags).toEqual(TAGS.slice(2, 4));
    });

    it("following the Link headers from n=2 returns every tag once, and the last page has no Link", async () => {
      const seen: string[] = [];
      let next: string | null = `/v2/${REPO}/tags/list?n=2`;
      let pages = 0;
      while (next !== null && pages++ < 10) {
        const response = await t.send("GET", next);
        seen.push(...((await response.json()) as { tags: string[] }).tags);
        next = response.headers.get("link")?.match(/^<([^>]+)>; rel="next"$/)?.[1] ?? null;
      }
      expect(seen).toEqual(TAGS);
      expect(pages).toBe(3);
    });

    it("of a repository nothing was pushed to is 404 NAME_UNKNOWN", async () => {
      const response = await t.send("GET", `/v2/${REPO}-never/tags/list`);
      expect(response.status).toBe(404);
      expect(await errorCodes(response)).toEqual(["NAME_UNKNOWN"]);
    });
  });

  describe("referrers", () => {
    const referrers = async (digest: string, query = "") => {
      const response = await t.send("GET", `/v2/${REPO}/referrers/${digest}${query}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe(MEDIA.index);
      const body = (await response.json()) as Index;
      expect(body.schemaVersion).toBe(2);
      expect(body.mediaType).toBe(MEDIA.index);
      return { response, body };
    };
    const expectDescriptors = (body: Index, expected: Referrer[]) => {
      const want = expected.map((r) => ({
        mediaType: r.mediaType,
        digest: r.manifest.digest,
        size: r.manifest.size,
        artifactType: r.artifactType,
        ...(r.annotation ? { annotations: { [ANNOTATION]: r.annotation } } : {}),
      }));
      const byDigest = (a: { digest: string }, b: { digest: string }) => a.digest.localeCompare(b.digest);
      expect([...body.manifests].sort(byDigest)).toEqual(want.sort(byDigest));
    };

    it("of a digest nothing refers to is 200 with an empty OCI index", async () => {
      const { body } = await referrers(digestOf("hello world"));
      expect(body.manifests).toEqual([]);
    });

    it("of the subject lists its five referrers (image and index, typed by artifactType or config media type) with size and annotations", async () => {
      expectDescriptors((await referrers(subject.digest)).body, referrersOfSubject);
    });

    it.each([
      [TYPE_A, () => [configA, layerA]],
      [TYPE_B, () => [configB, layerB]],
      [TYPE_INDEX, () => [indexReferrer]],
      ["application/vnd.nobody.uses.this", () => []],
    ] as [string, () => Referrer[]][])("filtered by artifactType=%s: OCI-Filters-Applied: artifactType and only the referrers of that type", async (type, expected) => {
      const { response, body } = await referrers(subject.digest, `?artifactType=${encodeURIComponent(type)}`);
      expect(response.headers.get("oci-filters-applied")).toBe("artifactType");
      expectDescriptors(body, expected());
    });

    it("without a filter there is no OCI-Filters-Applied header", async () => {
      expect((await referrers(subject.digest)).response.headers.get("oci-filters-applied")).toBeNull();
    });

    it("of a subject that was never pushed lists the referrer pushed for it", async () => {
      expectDescriptors((await referrers(neverPushed.digest)).body, [orphan]);
    });

    it("HEAD of referrers and of tags/list is 200 with the GET's headers and no body", async () => {
      for (const path of [`/v2/${REPO}/referrers/${subject.digest}`, `/v2/${REPO}/tags/list`]) {
        const head = await t.send("HEAD", path);
        expect(head.status).toBe(200);
        expect(head.headers.get("content-type")).toBe((await t.send("GET", path)).headers.get("content-type"));
        expect(head.body).toBeNull();
      }
    });
  });

  itIf(mode.auth)("without a token, tags/list and referrers are challenged for pull", async () => {
    for (const path of [`/v2/${REPO}/tags/list`, `/v2/${REPO}/referrers/${subject.digest}`]) {
      const response = await t.anonymous("GET", path);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain(`scope="repository:${REPO}:pull"`);
    }
  });

  // Runs last: it deletes what the other tests list.
  it("teardown: deleting the referrers and manifests empties the referrers and makes the repository unknown (deletes on), or is 405 and changes nothing (deletes off)", async () => {
    for (const r of [indexReferrer, configA, layerA, configB, layerB, orphan]) await expectDelete(t, `/v2/${REPO}/manifests/${r.manifest.digest}`);
    for (const m of [tagged, subject]) await expectDelete(t, `/v2/${REPO}/manifests/${m.digest}`);
    for (const blob of [configs[0]!, configs[2]!, layer, blobA, blobB, content("{}")]) await expectDelete(t, `/v2/${REPO}/blobs/${blob.digest}`);

    const referrers = (await (await t.send("GET", `/v2/${REPO}/referrers/${subject.digest}`)).json()) as Index;
    expect(referrers.manifests).toHaveLength(mode.deletes ? 0 : 5);
    const list = await t.send("GET", `/v2/${REPO}/tags/list`);
    if (mode.deletes) {
      // Every manifest and blob link gone: the repository is unknown, and out of the catalog.
      expect(list.status).toBe(404);
      expect(((await list.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe("NAME_UNKNOWN");
      const catalog = (await (await t.send("GET", "/v2/_catalog")).json()) as { repositories: string[] };
      expect(catalog.repositories).not.toContain(REPO);
    } else {
      expect(((await list.json()) as { tags: string[] }).tags).toEqual(TAGS);
    }
  });
});
