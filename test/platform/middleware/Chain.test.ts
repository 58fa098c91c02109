import { describe, test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { Chain, type Next } from "../../../src/platform/Chain.js";
import { Client, type ClientMiddlewareArgs } from "../../../src/client/Client.js";
import { useRedis } from "../../helpers/redis.js";

type Args = [log: string[]];

function named(name: string) {
  const fn = async (log: string[], next: Next) => {
    log.push(`${name}>`);
    await next();
    log.push(`<${name}`);
  };
  Object.defineProperty(fn, "name", { value: name });
  return fn;
}

const a = named("a");
const b = named("b");
const c = named("c");
const d = named("d");

async function run(chain: Chain<Args>): Promise<string[]> {
  const log: string[] = [];
  const ran = await chain.invoke([log], async () => {
    log.push("job");
  });
  assert.equal(ran, true);
  return log;
}

const names = (chain: Chain<Args>) => chain.list().map((m) => m.name);

describe("chain order", () => {
  test("add appends; middleware wrap the job in order", async () => {
    const chain = new Chain<Args>().add(a).add(b);
    assert.deepEqual(await run(chain), ["a>", "b>", "job", "<b", "<a"]);
    assert.equal(chain.size, 2);
  });

  test("add moves an existing entry to the end", () => {
    const chain = new Chain<Args>().add(a).add(b).add(c).add(a);
    assert.deepEqual(names(chain), ["b", "c", "a"]);
  });

  test("prepend puts an entry first, moving it if present", () => {
    const chain = new Chain<Args>().add(a).add(b).prepend(c);
    assert.deepEqual(names(chain), ["c", "a", "b"]);
    chain.prepend(b);
    assert.deepEqual(names(chain), ["b", "c", "a"]);
  });

  test("insertBefore and insertAfter", () => {
    const chain = new Chain<Args>().add(a).add(b);
    chain.insertBefore(b, c);
    assert.deepEqual(names(chain), ["a", "c", "b"]);
    chain.insertAfter(a, d);
    assert.deepEqual(names(chain), ["a", "d", "c", "b"]);
    chain.insertAfter(b, a);
    assert.deepEqual(names(chain), ["d", "c", "b", "a"]);
    chain.insertBefore(d, b);
    assert.deepEqual(names(chain), ["b", "d", "c", "a"]);
  });

  test("remove, has, clear", () => {
    const chain = new Chain<Args>().add(a).add(b).add(c);
    chain.remove(b);
    assert.deepEqual(names(chain), ["a", "c"]);
    assert.equal(chain.has(b), false);
    assert.equal(chain.has(c), true);
    chain.remove(b); // absent: no-op
    assert.equal(chain.size, 2);
    chain.clear();
    assert.equal(chain.size, 0);
  });

  test("inserting relative to a missing entry throws and leaves the chain as it was", () => {
    const chain = new Chain<Args>().add(a).add(b);
    assert.throws(() => chain.insertBefore(c, b), new Error("middleware c is not in the chain"));
    assert.throws(() => chain.insertAfter(d, a), new Error("middleware d is not in the chain"));
    assert.throws(
      () => chain.insertAfter(async (_l: string[], n: Next) => n(), a),
      /^Error: middleware \(anonymous\) is not in the chain$/,
    );
    assert.throws(() => chain.insertBefore(a, a), new Error("middleware a cannot be inserted relative to itself"));
    assert.deepEqual(names(chain), ["a", "b"]);
  });

  test("copy is independent of the original", () => {
    const chain = new Chain<Args>().add(a);
    const copy = chain.copy().add(b);
    assert.deepEqual(names(chain), ["a"]);
    assert.deepEqual(names(copy), ["a", "b"]);
  });

  test("an empty chain runs the job", async () => {
    assert.deepEqual(await run(new Chain<Args>()), ["job"]);
  });
});

describe("class and function middleware", () => {
  test("a class gets a fresh instance per invocation, built with the add() arguments", async () => {
    const instances: Tagger[] = [];
    class Tagger {
      calls = 0;
      constructor(
        readonly tag: string,
        readonly times: number,
      ) {
        instances.push(this);
      }
      async call(log: string[], next: Next): Promise<void> {
        this.calls++;
        log.push(`${this.tag}x${this.times}`);
        await next();
      }
    }
    const chain = new Chain<Args>().add(Tagger, "t", 2).add(a);
    assert.deepEqual(await run(chain), ["tx2", "a>", "job", "<a"]);
    assert.deepEqual(await run(chain), ["tx2", "a>", "job", "<a"]);
    assert.equal(instances.length, 2);
    assert.notEqual(instances[0], instances[1]);
    assert.deepEqual(
      instances.map((i) => i.calls),
      [1, 1],
    );
  });

  test("a plain function (not arrow) without a call method runs as a function", async () => {
    const chain = new Chain<Args>().add(function plain(log: string[], next: Next) {
      log.push("plain");
      return next();
    });
    assert.deepEqual(await run(chain), ["plain", "job"]);
  });

  test("middleware may change the arguments the rest of the chain sees", async () => {
    const chain = new Chain<[job: { n: number }]>()
      .add(async (job, next) => {
        job.n += 1;
        await next();
      })
      .add(async (job, next) => {
        job.n *= 10;
        await next();
      });
    const job = { n: 1 };
    let seen = 0;
    await chain.invoke([job], async () => {
      seen = job.n;
    });
    assert.equal(seen, 20);
  });
});

describe("stopping and errors", () => {
  test("a middleware that does not call next stops the chain: invoke resolves false", async () => {
    const log: string[] = [];
    const chain = new Chain<Args>()
      .add(a)
      .add((l: string[]) => void l.push("stop"))
      .add(b);
    const ran = await chain.invoke([log], async () => {
      log.push("job");
    });
    assert.equal(ran, false);
    assert.deepEqual(log, ["a>", "stop", "<a"]);
  });

  test("calling next twice throws", async () => {
    const chain = new Chain<Args>().add(async (_log: string[], next: Next) => {
      await next();
      await next();
    });
    let jobs = 0;
    await assert.rejects(
      chain.invoke([[]], async () => {
        jobs++;
      }),
      new Error("middleware called next() twice"),
    );
    assert.equal(jobs, 1);
  });

  test("errors from a middleware or the job propagate through the chain", async () => {
    const seen: string[] = [];
    const chain = new Chain<Args>().add(async (_log: string[], next: Next) => {
      try {
        await next();
      } catch (error) {
        seen.push((error as Error).message);
        throw error;
      }
    });
    await assert.rejects(
      chain.invoke([[]], async () => Promise.reject(new Error("job failed"))),
      /job failed/,
    );
    assert.deepEqual(seen, ["job failed"]);
  });

  test("synchronous middleware, throws and thenables: invoke always answers with a promise", async () => {
    // A throw before any promise (a plain function, a constructor, the job itself) rejects the invoke
    // rather than escaping it, with the value thrown.
    const thrower = () => {
      throw new Error("sync boom");
    };
    const invoked = new Chain<Args>().add(thrower).invoke([[]], async () => {});
    assert.ok(invoked instanceof Promise);
    await assert.rejects(invoked, /sync boom/);
    await assert.rejects(
      new Chain<Args>().invoke([[]], () => {
        throw new Error("job threw at once");
      }),
      /job threw at once/,
    );
    class Refuses {
      constructor() {
        throw new Error("constructor refused");
      }
      call(): void {}
    }
    await assert.rejects(
      new Chain<Args>().add(Refuses).invoke([[]], async () => {}),
      /constructor refused/,
    );
    const throwsText = () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- what a careless middleware does
      throw "not an Error";
    };
    await assert.rejects(
      new Chain<Args>().add(throwsText).invoke([[]], async () => {}),
      (thrown) => {
        assert.equal(thrown, "not an Error");
        return true;
      },
    );

    // A synchronous middleware that returns next()'s promise, and one returning a foreign thenable:
    // the chain waits for the job through both.
    const order: string[] = [];
    const passOn = (log: string[], next: Next) => {
      log.push("sync>");
      return next();
    };
    const thenable = (log: string[], next: Next) => ({
      then(resolve: () => void, reject: (e: unknown) => void) {
        log.push("thenable>");
        next().then(resolve, reject);
      },
    });
    const ran = await new Chain<Args>()
      .add(passOn)
      .add(thenable)
      .invoke([order], async () => {
        await new Promise((resolve) => setImmediate(resolve));
        order.push("job");
      });
    assert.equal(ran, true);
    assert.deepEqual(order, ["sync>", "thenable>", "job"]);
  });
});

describe("client chain", () => {
  const redis = useRedis();
  let client: Client | undefined;
  // Closed while the private Redis is surely up (useRedis()'s `after` stops it first).
  afterEach(async () => client?.close());

  test("a client middleware that does not call next: push returns null and writes nothing", async () => {
    const chain = new Chain<ClientMiddlewareArgs>();
    const refused: string[] = [];
    chain.add(async (className, job) => {
      refused.push(`${className}:${job.jid}`);
    });
    client = new Client({ redis: redis.url, middleware: chain });
    assert.equal(await client.push({ class: "Refused", args: [1], jid: "j1" }), null);
    assert.deepEqual(await client.pushBulk({ class: "Refused", args: [[1], [2]] }), [null, null]);
    assert.equal(refused.length, 3);
    assert.equal(refused[0], "Refused:j1");
    assert.equal(await redis.redis.dbsize(), 0);
  });
});
