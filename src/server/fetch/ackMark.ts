/**
 * What an acknowledgement sends to find a finished job in its private list: not the whole payload (a
 * job's bytes written back to Redis cost the worker more than anything else reliable fetch adds, and
 * keep every payload alive until the reply), but a mark that only that job carries:
 *
 *   "<byte length> <1-based offset> <width> <the 40 bytes from its `"jid":"` on>"
 *
 * A private list holds the jobs one process is running, each with its own jid, so the length and the
 * bytes around the jid single a job out. Two entries sharing a mark are copies of one job with one jid
 * (a duplicated push); removing either leaves the other to run, as LREM would. A batch's marks travel
 * as one string (ack-jobs-1.lua's ARGV[1]). A job is sent whole instead when it has no jid field, when
 * its marked bytes are not ASCII (sent as text they would change), or when `"jid":"` occurs in it twice
 * (a hash with a "jid" key in its args): a payload could otherwise carry another job's jid and length
 * and be taken for it.
 */
import { isUtf8 } from "node:buffer";

const JID_FIELD = Buffer.from('"jid":"');
/** bytes: `"jid":"` (7), a 24-character jid, its quote, and 8 more: a longer jid is still told apart. */
const MARK_BYTES = 40;

/** The job's mark, or undefined when it must be sent whole (`wholeJob`). */
export function ackMark(raw: Buffer): string | undefined {
  const at = raw.indexOf(JID_FIELD);
  if (at < 0 || raw.indexOf(JID_FIELD, at + JID_FIELD.length) >= 0) return undefined;
  const end = Math.min(at + MARK_BYTES, raw.length);
  for (let i = at; i < end; i++) if (raw[i]! >= 0x80) return undefined;
  return `${raw.length} ${at + 1} ${end - at} ${raw.toString("latin1", at, end)}`;
}

/** A job sent whole: its text when that is the same bytes (nearly always), else the bytes. */
export function wholeJob(raw: Buffer, text: string): string | Buffer {
  // As a string it joins the pipeline's text instead of turning the whole write into buffer concatenation.
  return isUtf8(raw) ? text : raw;
}
