/**
 * Client-side load balancing: a {@link dev.fairway.lb.LoadBalancer} per service chooses a
 * {@link dev.fairway.lb.Target} for each call by a {@link dev.fairway.lb.Strategy}, from the list a
 * {@link dev.fairway.lb.TargetSource} delivers, and keeps targets that fail out of rotation
 * ({@link dev.fairway.lb.PassiveHealth}, {@link dev.fairway.lb.ActiveHealth}).
 *
 * <p>Nullness: every type in this package is {@link org.jspecify.annotations.NullMarked}: a
 * parameter, return value or field is never null unless it is annotated
 * {@link org.jspecify.annotations.Nullable}. A builder or factory given null where null is not
 * allowed throws {@link IllegalArgumentException} naming the field.
 *
 * <p>Public API: the public types of this package. Every package-private class here is an
 * implementation detail and may change.
 */
@NullMarked
package dev.fairway.lb;

import org.jspecify.annotations.NullMarked;
