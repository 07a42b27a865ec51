/**
 * Test support that every client module's tests share, shipped as lb-core's test-jar (only this
 * package goes into it): {@link dev.fairway.lb.testing.FaultServer}, a loopback HTTP/1.1 server that
 * misbehaves in one scripted way; {@link dev.fairway.lb.testing.Nginx}, Debian's nginx on loopback
 * ports; {@link dev.fairway.lb.testing.PostLoad}, clients POSTing side by side against it; {@link
 * dev.fairway.lb.testing.NoDelayServerSocketFactory}; {@link dev.fairway.lb.testing.Closer}; and
 * {@link dev.fairway.lb.testing.Eventually}, a bounded wait. One copy, so a fault or a server means the same
 * bytes for every client the proofs compare. Not API: tests only, never in a user's classpath.
 */
package dev.fairway.lb.testing;
