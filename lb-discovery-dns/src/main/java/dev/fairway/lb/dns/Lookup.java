package dev.fairway.lb.dns;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;

/**
 * What one question's reply says, read by {@link #read}: records of the asked type ({@link Found}),
 * none ({@link Absent}: NXDOMAIN or no data, a real answer), an alias to ask about again
 * ({@link Alias}), or a reply that says nothing about the name ({@link Failed}: SERVFAIL, REFUSED, a
 * timeout). Pure: no I/O, unit-tested alone.
 */
sealed interface Lookup {
  /** The TTL assumed for a negative answer that carries no SOA record (RFC 2308 wants one). */
  long DEFAULT_NEGATIVE_TTL_SECONDS = 30;

  /**
   * Records of the asked type at the end of the alias chain, with the reply's additional section
   * (where a server puts the addresses of SRV targets), and the lowest TTL along the chain.
   */
  record Found(List<Record> records, List<Record> additional, long ttlSeconds) implements Lookup {}

  /** The name does not exist ({@code nxdomain}) or has no record of the type; valid for {@code ttlSeconds}. */
  record Absent(boolean nxdomain, long ttlSeconds) implements Lookup {}

  /** The reply ends in an alias whose target it does not answer for: ask again about {@code target}. */
  record Alias(Name target, long ttlSeconds) implements Lookup {}

  /** No answer about the name: {@code reason} is a short metric word, {@code detail} one line for the log. */
  record Failed(String reason, String detail) implements Lookup {}

  /** The longest alias chain followed, within one reply and across the questions asked again. */
  int MAX_ALIASES = 8;

  /** Reads {@code reply} to the question ({@code name}, {@code type}). */
  static Lookup read(Message reply, Name name, int type) {
    int rcode = reply.getRcode();
    if (rcode == Rcode.NXDOMAIN) {
      return new Absent(true, negativeTtl(reply));
    }
    if (rcode != Rcode.NOERROR) {
      String word = Rcode.string(rcode).toLowerCase(java.util.Locale.ROOT);
      return new Failed(word, "the server answered " + Rcode.string(rcode) + " for " + name + " " + typeName(type));
    }
    Name current = name;
    long ttl = Long.MAX_VALUE;
    List<Record> answer = reply.getSection(Section.ANSWER);
    for (int hop = 0; hop <= MAX_ALIASES; hop++) {
      List<Record> records = new ArrayList<>();
      @Nullable CNAMERecord alias = null;
      for (Record r : answer) {
        if (!r.getName().equals(current)) {
          continue;
        }
        if (r.getType() == type) {
          records.add(r);
        } else if (r instanceof CNAMERecord c) {
          alias = c;
        }
      }
      if (!records.isEmpty()) {
        for (Record r : records) {
          ttl = Math.min(ttl, r.getTTL());
        }
        return new Found(List.copyOf(records), List.copyOf(reply.getSection(Section.ADDITIONAL)), ttl);
      }
      if (alias == null) {
        break;
      }
      ttl = Math.min(ttl, alias.getTTL());
      current = alias.getTarget();
    }
    if (!current.equals(name)) {
      return new Alias(current, ttl);
    }
    return new Absent(false, negativeTtl(reply));
  }

  /** RFC 2308: the lesser of the SOA record's TTL and its MINIMUM field; a default without an SOA. */
  static long negativeTtl(Message reply) {
    for (Record r : reply.getSection(Section.AUTHORITY)) {
      if (r instanceof SOARecord soa) {
        return Math.min(soa.getTTL(), soa.getMinimum());
      }
    }
    return DEFAULT_NEGATIVE_TTL_SECONDS;
  }

  static String typeName(int type) {
    return org.xbill.DNS.Type.string(type);
  }
}
