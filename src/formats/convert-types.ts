/**
 * The result of converting a history between wire formats: the messages in the target format and
 * what the target cannot carry (each entry names the source message index and what was left out).
 * A conversion with an empty `lost` list is lossless: converting back gives the input again.
 */
export interface Converted<T> {
  readonly messages: T[];
  /** What could not be carried, e.g. `messages[3]: image part dropped (Hermes text has no images)`. */
  readonly lost: string[];
}
