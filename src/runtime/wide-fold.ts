import type { Grouping } from '../core/groups.js';
import type { RollingResult } from '../summarize/rolling.js';

/** Tokens kept back from a wider fold's room for its frame's longer count of covered messages. */
const WIDER_FRAME_MARGIN = 4;

/** What `widenFold` works from. */
export interface WideFoldInput {
  /** The summary folded to `range.end`, and the room it was given (absent: no limit). */
  readonly first: RollingResult;
  readonly firstRoom: number | undefined;
  /** The planned fold: [start, end), and the room the budget leaves a summary ending at `end`. */
  readonly range: { readonly start: number; readonly end: number; readonly roomTokens?: number };
  /** Whether the summarizer's summaries say how many facts they left out (`reportsFacts`): none is widened otherwise. */
  readonly reportsFacts: boolean;
  /** Wider ends to try, in order (each a group start after `range.end`). */
  readonly widths: readonly number[];
  readonly grouping: Grouping;
  /** Tokens of each message, counted up to the widest end. */
  readonly counts: ArrayLike<number>;
  readonly countText: (text: string) => number;
  /** Folds [range.start, end) in `roomTokens`; undefined when that attempt failed (the caller notes why). */
  readonly attempt: (end: number, roomTokens: number) => Promise<RollingResult | undefined>;
}

/** Facts a summary reports it left out; undefined when it reports none (no ledger). */
function droppedFacts(r: RollingResult): number | undefined {
  return r.factsSeen === undefined || r.factsKept === undefined ? undefined : r.factsSeen - r.factsKept;
}

/**
 * Room goes where the facts are. A summary that had to leave facts out for room, while turns after
 * it are sent word for word, takes those turns in too, with their room: each wider end in turn, kept
 * while it leaves out no more facts than the one before (its ledger states them in far fewer
 * tokens than the turns). Then the newest of the turns taken in that fit in the room the widest
 * summary left unused are given back word for word (a narrower summary, kept when it leaves out no
 * more facts). Returns the summary to use, where it ends and the room it was given; the first
 * one when no wider one is better. A summarizer whose summaries report no facts is never widened.
 */
export async function widenFold(input: WideFoldInput): Promise<{ readonly folded: RollingResult; readonly end: number; readonly roomTokens: number | undefined }> {
  const { range, grouping, counts, countText, attempt } = input;
  const roomAtEnd = range.roomTokens;
  let folded = input.first;
  let end = range.end;
  if (roomAtEnd === undefined || !input.reportsFacts) return { folded, end, roomTokens: input.firstRoom };
  const unpinned = (from: number, to: number) => {
    let t = 0;
    for (let i = from; i < to; i++) if (!grouping.pinned[i]) t += counts[i];
    return t;
  };
  // A first summary over the room the view leaves it keeps nothing in the view: any wider one that
  // reports its facts is better.
  const fits = input.firstRoom === undefined || countText(folded.summary) <= Math.min(input.firstRoom, roomAtEnd);
  let dropped = droppedFacts(folded);
  if (!fits) dropped = Number.POSITIVE_INFINITY;
  let room = roomAtEnd;
  // The frame names how many messages it covers: a few more digits may cost a token or two.
  const budgetRoom = (to: number) => Math.max(1, roomAtEnd + unpinned(range.end, to) - WIDER_FRAME_MARGIN);
  for (const wideEnd of input.widths) {
    if (dropped === undefined || dropped === 0) break;
    const wideRoom = budgetRoom(wideEnd);
    if (input.firstRoom !== undefined && wideRoom <= input.firstRoom) continue;
    const wider = await attempt(wideEnd, wideRoom);
    const droppedWider = wider && droppedFacts(wider);
    if (!wider || droppedWider === undefined || droppedWider > dropped) break;
    folded = wider;
    end = wideEnd;
    room = wideRoom;
    dropped = droppedWider;
  }
  if (end === range.end || dropped === undefined) return { folded, end, roomTokens: end === range.end ? input.firstRoom : room };
  const unused = room - countText(folded.summary);
  let back = end;
  let given = 0;
  for (let g = grouping.groupOf[end - 1]; g >= 0 && grouping.groups[g].start > range.end; g--) {
    const more = unpinned(grouping.groups[g].start, back);
    if (given + more > unused) break;
    given += more;
    back = grouping.groups[g].start;
  }
  if (back < end) {
    const narrower = await attempt(back, room - given);
    const droppedNarrower = narrower && droppedFacts(narrower);
    if (narrower && droppedNarrower !== undefined && droppedNarrower <= dropped) return { folded: narrower, end: back, roomTokens: room - given };
  }
  return { folded, end, roomTokens: room };
}
