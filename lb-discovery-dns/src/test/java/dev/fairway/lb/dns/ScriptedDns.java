package dev.fairway.lb.dns;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * A {@link DnsClient} that answers from a script: per question ({@code name type}), the replies to
 * give in order (the last one repeats). A reply is built against the question, so it carries it as a
 * real one does. Records every question asked, in order. Completes at once on the calling thread,
 * unless the reply is {@link #NEVER} (the question hangs, for timeouts).
 */
final class ScriptedDns implements DnsClient {
  /** A reply that never comes. */
  static final Function<Message, Message> NEVER = q -> q;

  private final Map<String, Deque<Function<Message, Message>>> script = new HashMap<>();
  private final List<String> asked = new ArrayList<>();

  /** Queues {@code replies} for the question {@code "name TYPE"}, e.g. {@code "_http._tcp.svc.test. SRV"}. */
  @SafeVarargs
  final ScriptedDns on(String question, Function<Message, Message>... replies) {
    Deque<Function<Message, Message>> q = script.computeIfAbsent(question, k -> new ArrayDeque<>());
    q.addAll(List.of(replies));
    return this;
  }

  /** Replaces whatever was queued for {@code question}. */
  @SafeVarargs
  final ScriptedDns now(String question, Function<Message, Message>... replies) {
    script.remove(question);
    return on(question, replies);
  }

  /** The questions asked so far, oldest first; and forgets them. */
  List<String> takeAsked() {
    List<String> out = List.copyOf(asked);
    asked.clear();
    return out;
  }

  @Override
  public CompletableFuture<Message> query(Name name, int type) {
    String key = name + " " + Type.string(type);
    asked.add(key);
    Deque<Function<Message, Message>> q = script.get(key);
    if (q == null || q.isEmpty()) {
      return CompletableFuture.failedFuture(new IOException("unscripted question " + key));
    }
    Function<Message, Message> reply = q.size() > 1 ? q.poll() : q.peek();
    if (reply == NEVER) {
      return new CompletableFuture<>();
    }
    if (reply instanceof Fail f) {
      return CompletableFuture.failedFuture(f.e());
    }
    Message query = Message.newQuery(Record.newRecord(name, type, DClass.IN));
    try {
      return CompletableFuture.completedFuture(reply.apply(query));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  // ------------------------------------------------------------------------------ reply builders

  static Function<Message, Message> answer(Record... records) {
    return q -> reply(q, Rcode.NOERROR, records, new Record[0], new Record[0]);
  }

  static Function<Message, Message> answerWithAdditional(Record[] answer, Record... additional) {
    return q -> reply(q, Rcode.NOERROR, answer, new Record[0], additional);
  }

  static Function<Message, Message> rcode(int rcode, Record... authority) {
    return q -> reply(q, rcode, new Record[0], authority, new Record[0]);
  }

  /** The client fails the question with {@code e}, as dnsjava does on a timeout or a socket error. */
  static Function<Message, Message> failure(IOException e) {
    return new Fail(e);
  }

  private record Fail(IOException e) implements Function<Message, Message> {
    @Override
    public Message apply(Message q) {
      throw new AssertionError("not a reply");
    }
  }

  private static Message reply(Message query, int rcode, Record[] answer, Record[] authority, Record[] additional) {
    Message m = new Message(query.getHeader().getID());
    m.getHeader().setFlag(Flags.QR);
    m.getHeader().setRcode(rcode);
    m.addRecord(query.getQuestion(), Section.QUESTION);
    for (Record r : answer) {
      m.addRecord(r, Section.ANSWER);
    }
    for (Record r : authority) {
      m.addRecord(r, Section.AUTHORITY);
    }
    for (Record r : additional) {
      m.addRecord(r, Section.ADDITIONAL);
    }
    return m;
  }

  static Name name(String s) {
    try {
      return Name.fromString(s, Name.root);
    } catch (org.xbill.DNS.TextParseException e) {
      throw new IllegalArgumentException(s, e);
    }
  }

  static SRVRecord srv(String owner, long ttl, int priority, int weight, int port, String target) {
    return new SRVRecord(name(owner), DClass.IN, ttl, priority, weight, port, name(target));
  }

  static ARecord a(String owner, long ttl, String address) {
    return new ARecord(name(owner), DClass.IN, ttl, inet(address));
  }

  static AAAARecord aaaa(String owner, long ttl, String address) {
    return new AAAARecord(name(owner), DClass.IN, ttl, inet(address));
  }

  static CNAMERecord cname(String owner, long ttl, String target) {
    return new CNAMERecord(name(owner), DClass.IN, ttl, name(target));
  }

  /** An SOA whose TTL and MINIMUM give the negative TTL min(ttl, minimum) (RFC 2308). */
  static SOARecord soa(String zone, long ttl, long minimum) {
    return new SOARecord(name(zone), DClass.IN, ttl, name("ns." + zone), name("admin." + zone), 1, 3600, 600,
        86400, minimum);
  }

  static InetAddress inet(String literal) {
    try {
      return InetAddress.getByName(literal); // a literal: no lookup
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(literal, e);
    }
  }
}
