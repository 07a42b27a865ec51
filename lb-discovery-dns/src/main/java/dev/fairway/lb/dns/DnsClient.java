package dev.fairway.lb.dns;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Resolver;

/**
 * Sends one question to the resolver and hands back its whole reply (every section, the response
 * code). The seam between the refresh logic and the network: tests script replies through it.
 */
interface DnsClient {
  /** The reply to ({@code name}, {@code type}, IN), or a failure ({@link java.io.IOException}, a timeout). */
  CompletableFuture<Message> query(Name name, int type);

  /** A client over dnsjava's resolver, which gives up on a question after {@code timeout}. */
  static DnsClient of(Resolver resolver, Duration timeout) {
    resolver.setTimeout(timeout);
    return (name, type) -> resolver.sendAsync(Message.newQuery(Record.newRecord(name, type, DClass.IN)))
        .toCompletableFuture();
  }
}
