import type { Diagnostic } from "../types.js";
import type { ToolCallAssembler } from "./tool-call.js";

/** Placeholder ids some servers put on chunks that carry no id (`"null"`, `"None"`, `"undefined"`). */
const PLACEHOLDER_IDS: ReadonlySet<string> = new Set(["", "null", "None", "undefined", "nil", "NULL"]);

/** True when a provider id field holds no id: empty, or a serialized null of some language. */
export function isPlaceholderId(id: string): boolean {
  return PLACEHOLDER_IDS.has(id.trim());
}

/**
 * The id rule, one for every provider: ids are unique within a turn. A call whose sent id an
 * earlier call already carries gets a minted id `<sent>_tw<n>` (`providerId` keeps the sent one,
 * repair `minted_id`, diagnostic `call_id_duplicate`). A minted id never equals an id the
 * provider sent in the turn: it is checked against every sent id, and when a later call is sent
 * with an id toolwire had minted for an earlier call, the earlier call is minted another
 * (`call_id_reminted`) and the later one keeps the id it was sent with.
 */
export class CallIds {
  /** Every call id the provider sent in this turn (a minted id never equals one of them). */
  private sent = new Set<string>();
  /** The call that carries each id now. */
  private owners = new Map<string, ToolCallAssembler>();
  /** Next suffix to try when minting from a base id (keeps N duplicates of one id linear). */
  private suffixes = new Map<string, number>();

  constructor(private readonly host: { diagnostic(diagnostic: Diagnostic): void }) {}

  /** Gives `call` the id it was sent with (`minted`: the id toolwire made up), under the rule. */
  assign(call: ToolCallAssembler, id: string, minted: boolean): void {
    if (minted) {
      const unique = this.isTaken(id) ? this.mintFrom(id) : id;
      call.id = unique;
      call.idMinted = true;
      this.owners.set(unique, call);
      return;
    }
    this.sent.add(id);
    const owner = this.owners.get(id);
    if (!owner || owner === call) {
      call.id = id;
      this.owners.set(id, call);
      return;
    }
    if (owner.idMinted) {
      const replacement = this.mintFrom(owner.providerId ?? id);
      this.owners.set(replacement, owner);
      owner.renameId(replacement);
      call.id = id;
      this.owners.set(id, call);
      this.host.diagnostic({ code: "call_id_reminted", severity: "warning", message: `The provider sent the id ${id} for call ${call.index}, which toolwire had minted for call ${owner.index}; call ${owner.index} now carries ${replacement} (its earlier events showed ${id}).`, callIndex: owner.index, data: { id, minted: replacement, callIndex: call.index } });
      return;
    }
    const replacement = this.mintFrom(id);
    call.id = replacement;
    call.providerId = id;
    call.idMinted = true;
    this.owners.set(replacement, call);
    this.host.diagnostic({ code: "call_id_duplicate", severity: "warning", message: `Call ${call.index} arrived with the id ${id}, which call ${owner.index} already has; it was given the id ${replacement} (providerId keeps ${id}), so that each result pairs with its own call.`, callIndex: call.index, data: { id, minted: replacement, firstCallIndex: owner.index } });
  }

  /**
   * The provider's id arrived after the call opened under a minted one (Chat Completions servers
   * that send the id late): the call takes it, under the same rule as at open.
   */
  adoptProviderId(call: ToolCallAssembler, id: string): void {
    if (this.owners.get(call.id) === call) this.owners.delete(call.id);
    call.idMinted = false;
    call.providerId = undefined;
    this.assign(call, id, false);
  }

  /** The id of a call read from text at `position`: derived from it, never one a provider sent. */
  forTextCall(position: number): string {
    // Checked against the id index, not a set built from every call: that was O(calls) per call.
    let id = `tw_text_${position}`;
    for (let n = 1; this.isTaken(id); n++) id = `tw_text_${position}_${n}`;
    return id;
  }

  /** Records that `call` carries the id it was built with (one minted by `mintFrom`). */
  claim(call: ToolCallAssembler): void {
    this.owners.set(call.id, call);
  }

  /** `<base>_tw<n>` with the first n from 2 on that no call carries and the provider never sent. */
  mintFrom(base: string): string {
    let n = this.suffixes.get(base) ?? 2;
    let id = `${base}_tw${n}`;
    while (this.isTaken(id)) id = `${base}_tw${++n}`;
    this.suffixes.set(base, n + 1);
    return id;
  }

  private isTaken(id: string): boolean {
    return this.owners.has(id) || this.sent.has(id);
  }
}
