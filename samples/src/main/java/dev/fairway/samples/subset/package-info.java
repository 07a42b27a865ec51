/**
 * The subsetting lab ({@code subset-lab}): deterministic subsetting against random subsetting over
 * real lb-core balancers, without sockets.
 */
@NullMarked
package dev.fairway.samples.subset;

import org.jspecify.annotations.NullMarked;
