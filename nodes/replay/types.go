package replay

import (
	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/nodes/node"
)

// InputTypes returns the types of the node's input topics as the log
// records them (node.Options.Types): the schema and the message encoding
// of each, CDR for ROS 2 logs and ROS 1 serialization for bags, so that a
// node built with them decodes the log's messages as Run's does and
// advertises its inputs in the encoding they carry. It reads r as Run
// does (see Run: a log without a summary is read ahead, at most
// maxLookahead bytes of input messages, 0 for DefaultMaxLookahead, until
// every input topic has appeared); a log that lacks an input topic is an
// error that lists its topics. r is left part-read: open the log again to
// play it.
func InputTypes(r logio.MessageReader, p *node.Params, maxLookahead int) (map[string]node.TopicType, error) {
	wanted, required := inputTopics(p.Node)
	if maxLookahead <= 0 {
		maxLookahead = DefaultMaxLookahead
	}
	src := &lookahead{r: r, wanted: wanted}
	channels, err := src.discover(required, maxLookahead)
	if err != nil {
		return nil, err
	}
	return channelTypes(channels, wanted), nil
}

// inputTopics returns the topics a node built from cfg reads (its inputs
// and a port trajectory topic) and those it requires (its inputs).
func inputTopics(cfg *node.Config) (wanted map[string]bool, required []string) {
	wanted = map[string]bool{}
	for _, t := range cfg.Topics {
		wanted[t.Topic] = true
		required = append(required, t.Topic)
	}
	if cfg.Ports.Forecast == node.ForecastTopic {
		wanted[cfg.Ports.Topic] = true
	}
	return wanted, required
}

// channelTypes returns the types of the wanted topics among channels.
func channelTypes(channels []*logio.Channel, wanted map[string]bool) map[string]node.TopicType {
	types := map[string]node.TopicType{}
	for _, ch := range channels {
		if wanted[ch.Topic] {
			types[ch.Topic] = node.TopicType{Type: ch.Type, Definition: string(ch.Schema), SchemaEncoding: ch.SchemaEncoding, Encoding: ch.Encoding}
		}
	}
	return types
}
