/**
 * Helpers that Fairway's own modules share: failure classification, list comparison, argument
 * messages and the builders' set-once rule.
 *
 * <p><b>Not public API.</b> Like {@code okhttp3.internal}, this package may change or disappear in
 * any release without notice; code outside Fairway must not use it.
 */
@NullMarked
package dev.fairway.lb.internal;

import org.jspecify.annotations.NullMarked;
