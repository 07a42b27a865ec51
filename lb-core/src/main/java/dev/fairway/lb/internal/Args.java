package dev.fairway.lb.internal;

import org.jspecify.annotations.Nullable;

/**
 * The argument checks and messages every Fairway builder uses, so that all three modules fail the
 * same way: a bad value is an {@link IllegalArgumentException} reading {@code field: value
 * (expected: ...)}; an option set twice is an {@link IllegalStateException} reading {@code field was
 * already set to value}. Not public API (see the package documentation).
 */
public final class Args {
  private Args() {}

  /** {@code "text"} in quotes, or {@code null} bare, for messages that must show blanks and nulls. */
  public static String quote(@Nullable String s) {
    return s == null ? "null" : "\"" + s + "\"";
  }

  /**
   * Throws {@link IllegalStateException} if a builder option was already set ({@code current} is
   * not null).
   */
  public static void requireUnset(String field, @Nullable Object current) {
    if (current != null) {
      throw new IllegalStateException(
          field + " was already set to " + (current instanceof String text ? quote(text) : current));
    }
  }

  /** As {@link #requireUnset}, for a secret (a token): the message names the field, never the value. */
  public static void requireUnsetSecret(String field, @Nullable Object current) {
    if (current != null) {
      throw new IllegalStateException(field + " was already set");
    }
  }

  /** Throws {@link IllegalArgumentException} {@code field: value (expected: expected)} unless {@code ok}. */
  public static void requireArgument(boolean ok, String field, @Nullable Object value, String expected) {
    if (!ok) {
      throw invalid(field, value, expected);
    }
  }

  /**
   * The exception {@link #requireArgument} throws, for a caller that throws it itself, so that a
   * null check stays visible to the nullness checker: {@code if (x == null) throw invalid(...)}.
   */
  public static IllegalArgumentException invalid(String field, @Nullable Object value, String expected) {
    return new IllegalArgumentException(
        field + ": " + (value instanceof String text ? quote(text) : value) + " (expected: " + expected + ")");
  }
}
